import type { Command } from "../command.js";
import { simulateCommand } from "./simulate.js";

/** Every subcommand, in the order `kaiawatch --help` lists them. */
export const COMMANDS: Command[] = [simulateCommand];
