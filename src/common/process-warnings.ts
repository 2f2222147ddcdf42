import type { Logger } from "./logger.js";

/**
 * Node prints process warnings (MaxListenersExceededWarning, deprecations, experimental
 * features) to stderr as plain text, and that text landed between the JSON lines of the
 * log. Once installed, a warning goes through the command's logger as one JSON line (with
 * its secrets scrubbed like any other); before a command has a logger, or for one that has
 * none (`validate`), it is printed as Node would.
 */
let current: Logger | undefined;
let installed = false;

/** Takes over Node's own warning output; the process entry (bin.ts) calls it once. */
export function routeProcessWarnings(fallback: NodeJS.WritableStream = process.stderr): void {
  if (installed) return;
  installed = true;
  // Node's default printer is an ordinary 'warning' listener (unless --no-warnings removed it).
  process.removeAllListeners("warning");
  process.on("warning", (warning: Error & { code?: string }) => {
    if (current) {
      current.warn({ warning: warning.name, ...(warning.code === undefined ? {} : { code: warning.code }), detail: warning.message }, "node process warning");
    } else {
      fallback.write(`(node:${process.pid}) ${warning.code === undefined ? "" : `[${warning.code}] `}${warning.name}: ${warning.message}\n`);
    }
  });
}

/** The logger process warnings go to from now on (the last command's, in a process that runs one). */
export function setProcessWarningLogger(logger: Logger | undefined): void {
  current = logger;
}
