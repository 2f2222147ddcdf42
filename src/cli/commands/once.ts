import type { Command } from "../command.js";
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE } from "../command.js";
import { CONFIG_OPTIONS_HELP } from "../bootstrap.js";
import { parseDuration } from "../../config/index.js";
import { withDaemon } from "../run-command.js";
import { commandProgress } from "../command-progress.js";

export const onceCommand: Command = {
  help: `Usage: kaiawatch once [options]

Reads the head once, brings every source's cursor up to it (window after window),
then delivers what is due in the outbox and exits. A catch-up longer than one window shows
its progress (blocks done of the total, rate, time left): a line on a terminal, else an
info log line every few seconds. Alerts not delivered within the
drain timeout (failing sinks, a long backlog) stay in the outbox for the next run.

Exit codes: 0 every source reached the head; 1 a source failed (its cursor stays where
it was and the next run retries); 2 a bad config or usage.

Options:
${CONFIG_OPTIONS_HELP}
  --drain-timeout DURATION   how long to keep delivering after the scan (default 30s)
`,
  run: (args, io) =>
    withDaemon(args, io, { "drain-timeout": { type: "string", default: "30s" } }, async ({ daemon, values }) => {
      let drainTimeoutMs: number;
      try {
        drainTimeoutMs = parseDuration(String(values["drain-timeout"]));
      } catch (error) {
        io.stderr.write(`kaiawatch once: --drain-timeout: ${(error as Error).message}\n`);
        await daemon.stop();
        return EXIT_USAGE;
      }
      let failed = 0;
      try {
        const { scan, delivery } = await daemon.runOnce({ drainTimeoutMs });
        io.stdout.write(`head ${scan.head}\n`);
        const byKey = new Map(daemon.plan.sources.map((s) => [s.key, s]));
        for (const { key, result, error } of scan.results) {
          const source = byKey.get(key)!;
          if (error !== undefined) {
            failed += 1;
            io.stdout.write(`  ${source.watch}: ${source.description}: FAILED ${error}\n`);
          } else if (result) {
            io.stdout.write(`  ${source.watch}: ${source.description}: cursor ${result.cursor}, ${result.records} records, ${result.alerts} alerts\n`);
          }
        }
        io.stdout.write(`delivered ${delivery.delivered}, suppressed ${delivery.suppressed}, retrying ${delivery.retried}, dead ${delivery.dead}, still pending ${delivery.pending}\n`);
      } finally {
        await daemon.stop();
      }
      return failed > 0 ? EXIT_RUNTIME : EXIT_OK;
    }, (common, values) => ({ progress: commandProgress(common, io, values["log-level"] !== undefined) })),
};
