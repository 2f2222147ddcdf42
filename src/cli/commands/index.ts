import type { Command } from "../command.js";
import { cursorsCommand } from "./cursors.js";
import { demoCommand } from "./demo.js";
import { onceCommand } from "./once.js";
import { outboxCommand } from "./outbox.js";
import { runCommand } from "./run.js";
import { simulateCommand } from "./simulate.js";
import { validateCommand } from "./validate.js";

/** Every subcommand, in the order `kaiawatch --help` lists them. */
export const COMMANDS: Command[] = [runCommand, onceCommand, validateCommand, cursorsCommand, outboxCommand, simulateCommand, demoCommand];
