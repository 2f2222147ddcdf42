import { once } from "node:events";
import type { Command } from "../command.js";
import { EXIT_OK } from "../command.js";
import { CONFIG_OPTIONS_HELP } from "../bootstrap.js";
import { withDaemon } from "../run-command.js";

/** How long a stop may take before the process exits anyway: a service manager waits for us. */
const STOP_TIMEOUT_MS = 15_000;

export const runCommand: Command = {
  name: "run",
  summary: "run the daemon: poll every source on its schedule and deliver alerts",
  help: `Usage: kaiawatch run [options]

Runs until SIGINT or SIGTERM: every source is polled on its schedule, matches become
alerts in the store's outbox, and the dispatcher delivers them to their sinks. On a
signal, new ticks stop, the store write in flight finishes, and the process exits 0
(within ${STOP_TIMEOUT_MS / 1000} s).

Options:
${CONFIG_OPTIONS_HELP}
`,
  run: (args, io) =>
    withDaemon(args, io, {}, async ({ daemon, common }) => {
      daemon.start();
      common.logger.info({ sources: daemon.plan.sources.length, store: daemon.store.path }, "kaiawatch running");
      if (!io.signal.aborted) await once(io.signal, "abort");
      common.logger.info("stopping");
      const timer = setTimeout(() => {
        common.logger.error({ duration_ms: STOP_TIMEOUT_MS }, "stop took too long; exiting");
        process.exit(1);
      }, STOP_TIMEOUT_MS);
      timer.unref();
      await daemon.stop();
      clearTimeout(timer);
      common.logger.info("stopped");
      return EXIT_OK;
    }),
};
