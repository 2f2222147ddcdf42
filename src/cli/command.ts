/**
 * A CLI subcommand. `run` returns the exit code: 0 fine, 2 bad config or usage,
 * 1 runtime failure. Output for the user goes to the given streams, never to the logger.
 * Its name and summary are the registry's (commands/index.ts), which lists them without
 * loading the command.
 */
export interface Command {
  /** The full text of `kaiawatch NAME --help`. */
  help: string;
  run(args: string[], io: CommandIO): Promise<number>;
}

export interface CommandIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
  /** Subscribes to reload requests (SIGHUP); returns the unsubscribe function. Absent where nothing can ask. */
  onReload?: (listener: () => void) => () => void;
}

/** A user's mistake on the command line: one line and exit 2, never a stack trace. */
export class UsageError extends Error {}

export const EXIT_OK = 0;
export const EXIT_RUNTIME = 1;
export const EXIT_USAGE = 2;
