import { createRequire } from "node:module";
import { pino, type Logger, type LevelWithSilent } from "pino";
import type PinoPretty from "pino-pretty";
import type { SecretRedactor } from "./secrets.js";

// Loaded only for pretty output: its 30 modules cost ~20 ms of every start-up otherwise.
const require = createRequire(import.meta.url);

export type { Logger };

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Human-readable lines instead of JSON (a terminal). */
  pretty?: boolean;
  redactor: SecretRedactor;
  /** Where lines go; stderr by default so that command output on stdout stays clean. */
  destination?: NodeJS.WritableStream;
}

/**
 * pino with fixed snake_case keys and every serialized line scrubbed of known secrets.
 * Pretty output is produced in-process (pino-pretty as a stream, not a worker thread) so
 * that scrubbing happens before formatting and a crash does not lose buffered lines.
 */
export function createLogger(options: LoggerOptions): Logger {
  const { redactor } = options;
  const config = {
    level: options.level ?? "info",
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: { streamWrite: (line: string) => redactor.redact(line) },
    // Structured values that commonly carry credentials are censored by key as well.
    redact: { paths: ["*.authorization", "*.password", "*.pass", "*.api_key", "*.secret", "*.token"], censor: "[redacted]" },
  };
  const destination = options.destination ?? process.stderr;
  if (options.pretty) {
    const colorize = (destination as { isTTY?: boolean }).isTTY === true;
    const pinoPretty = require("pino-pretty") as typeof PinoPretty;
    return pino(config, pinoPretty({ destination, colorize, sync: true, translateTime: "SYS:HH:MM:ss.l" }));
  }
  return pino(config, destination);
}

/** A logger that writes nothing: for tests and library use. */
export function createSilentLogger(): Logger {
  return pino({ level: "silent" });
}
