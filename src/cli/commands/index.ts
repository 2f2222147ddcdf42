import type { Command } from "../command.js";
import { outboxCommand } from "./outbox.js";
import { simulateCommand } from "./simulate.js";
import { validateCommand } from "./validate.js";

/** Every subcommand, in the order `kaiawatch --help` lists them. */
export const COMMANDS: Command[] = [outboxCommand, simulateCommand, validateCommand];
