import { readFileSync } from "node:fs";
import { COMMANDS } from "./commands/index.js";
import { EXIT_RUNTIME, EXIT_USAGE, UsageError, type CommandIO } from "./command.js";
import { describeError, isKaiawatchError } from "../common/errors.js";

export const VERSION: string = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 4);
  return [
    "kaiawatch: monitoring and alerting for the Kaia blockchain",
    "",
    "Usage: kaiawatch <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Options for every command:",
    "  --help       show the command's options",
    "  --version    print the version",
    "",
    "Exit codes: 0 fine, 2 bad config or usage, 1 runtime failure.",
    "Run `kaiawatch <command> --help` for a command's options.",
    "",
  ].join("\n");
}

export async function main(argv: string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(usage());
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === "--version" || name === "-v") {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    io.stderr.write(`kaiawatch: unknown command "${name}"\n\n${usage()}`);
    return EXIT_USAGE;
  }
  const command = await entry.load();
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout.write(command.help.endsWith("\n") ? command.help : `${command.help}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    // User mistakes and expected failures (a locked store, an unreachable explorer) are one
    // line with their code; only bugs reach bin.ts and print a stack.
    if (error instanceof UsageError) {
      io.stderr.write(`kaiawatch ${name}: ${error.message}\nRun \`kaiawatch ${name} --help\` for the options.\n`);
      return EXIT_USAGE;
    }
    if (isKaiawatchError(error)) {
      io.stderr.write(`kaiawatch ${name}: ${describeError(error)}\n`);
      return EXIT_RUNTIME;
    }
    throw error;
  }
}
