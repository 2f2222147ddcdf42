#!/usr/bin/env node
import { main } from "./main.js";
import { describeError } from "../common/errors.js";
import { routeProcessWarnings } from "../common/process-warnings.js";

// Warnings become JSON log lines once a command has its logger: no plain text in a JSON log.
routeProcessWarnings();

// `kaiawatch outbox | head`: once the reader has what it wants it closes the pipe, and the
// next write fails with EPIPE. That is the reader's choice, not an error: end quietly, as
// other command-line tools do, rather than with a stack trace on stderr.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const controller = new AbortController();
let signals = 0;
const onSignal = (signal: NodeJS.Signals) => {
  signals += 1;
  // A second Ctrl-C means "now": skip the graceful path.
  if (signals > 1) process.exit(130);
  controller.abort(new Error(`received ${signal}`));
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

// SIGHUP's default action ends the process: always handle it, and keep a request that
// arrives while nobody listens (during a reload) for the next listener.
const reloadListeners = new Set<() => void>();
let reloadPending = false;
process.on("SIGHUP", () => {
  if (reloadListeners.size === 0) reloadPending = true;
  for (const listener of reloadListeners) listener();
});
const onReload = (listener: () => void) => {
  reloadListeners.add(listener);
  if (reloadPending) {
    reloadPending = false;
    queueMicrotask(listener);
  }
  return () => void reloadListeners.delete(listener);
};

main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: controller.signal, onReload })
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error: unknown) => {
    // Only bugs reach here: user mistakes are reported by the commands themselves.
    process.stderr.write(`kaiawatch: internal error: ${describeError(error)}\n`);
    if (error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    process.exitCode = 1;
  });
