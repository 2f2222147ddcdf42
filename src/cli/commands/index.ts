import type { Command } from "../command.js";

/** Every subcommand, in the order `kaiawatch --help` lists them. */
export const COMMANDS: Command[] = [];
