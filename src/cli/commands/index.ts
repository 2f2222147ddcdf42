import type { Command } from "../command.js";
import { cursorsCommand } from "./cursors.js";
import { demoCommand } from "./demo.js";
import { explainCommand } from "./explain.js";
import { onceCommand } from "./once.js";
import { outboxCommand } from "./outbox.js";
import { planCommand } from "./plan.js";
import { replayCommand } from "./replay.js";
import { runCommand } from "./run.js";
import { silenceCommand } from "./silence.js";
import { simulateCommand } from "./simulate.js";
import { testSinkCommand } from "./test-sink.js";
import { validateCommand } from "./validate.js";

/** Every subcommand, in the order `kaiawatch --help` lists them. */
export const COMMANDS: Command[] = [runCommand, onceCommand, validateCommand, planCommand, cursorsCommand, outboxCommand, testSinkCommand, replayCommand, explainCommand, silenceCommand, simulateCommand, demoCommand];
