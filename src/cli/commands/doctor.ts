import type { Config } from "../../config/index.js";
import { runDoctor, type DoctorReport } from "../../doctor/doctor.js";
import { OPERATIONS, type OperationName } from "../../explorer/operations.js";
import { printable } from "../../notify/test-alert.js";
import { EXIT_OK, EXIT_RUNTIME, type Command, type CommandIO } from "../command.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, parseCommandArgs, startConfigCommand } from "../bootstrap.js";

const HELP = `Usage: kaiawatch doctor [options]

What to run first with a real key: checks a config against the services it names and
prints one line per check with its verdict (ok, warn, FAIL) and, for each failure, the fix.

  store          the store's folder exists or can be made, a file can be created and
                 written in it, and the store lock can be taken (a lock held by a running
                 daemon is a warning); the file store only
  chain rpc      the node answers, its chain id is chain.network's (8217 mainnet, 1001 Kairos)
  explorer       the explorer answers and accepts explorer.api_key (1 credit)
  plan           the key's quotas, where the server says them, and whether its plan has
                 operation 7 (PRO_PLUS) when the config would use it (20 credits if it does)
  operation N    every operation the config's sources and enrichments use answers a
                 one-record request whose shape kaiawatch reads; fields beyond the API
                 document are listed (1 to 5 credits each)
  indexing lag   how far the explorer's indexing is behind the node, against chain.lag_blocks
  sink NAME      the sink's host resolves (or its file's folder is writable); with --send a
                 test alert goes through it, as \`kaiawatch test-sink NAME\` sends it

The store itself is not opened (its folder is made if missing, the probe file is removed,
the lock file beside it stays). The credits the probes cost are printed at the end.

Exit codes: 0 every check is ok (warnings allowed), 1 a check failed, 2 a bad config.

Options:
${CONFIG_OPTIONS_HELP}
  --send                send a test alert through every sink
`;

const OPTIONS = { ...CONFIG_OPTIONS, send: { type: "boolean", default: false } } as const;

const MARK = { ok: "ok  ", warn: "warn", fail: "FAIL" } as const;

export function formatDoctor(report: DoctorReport, config: Config, path: string): string {
  const explorer = new URL(config.explorer.base_url).host;
  const rpc = new URL(config.chain.rpc_url).host;
  const width = Math.max(...report.checks.map((c) => c.check.length));
  const lines = [`kaiawatch doctor: ${path} (network ${config.chain.network}; explorer ${explorer}; node ${rpc})`, ""];
  for (const check of report.checks) {
    lines.push(`  ${MARK[check.verdict]}  ${check.check.padEnd(width)}  ${printable(check.detail)}`);
    if (check.fix !== undefined) lines.push(`  ${" ".repeat(4)}  ${" ".repeat(width)}  fix: ${printable(check.fix)}`);
  }
  const spent = Object.entries(report.creditsByOperation)
    .map(([operation, credits]) => `operation ${OPERATIONS[operation as OperationName].number}: ${credits}`)
    .join(", ");
  lines.push("", `credits spent: ${report.credits}${spent ? ` (${spent})` : ""}`);
  const failed = report.checks.filter((c) => c.verdict === "fail").length;
  const warned = report.checks.filter((c) => c.verdict === "warn").length;
  lines.push(failed > 0 ? `${failed} check${failed === 1 ? "" : "s"} failed: fix ${failed === 1 ? "it" : "them"} and run kaiawatch doctor again.` : `all is well${warned > 0 ? ` (${warned} warning${warned === 1 ? "" : "s"})` : ""}: next, kaiawatch validate, kaiawatch plan, kaiawatch replay, kaiawatch run.`);
  return `${lines.join("\n")}\n`;
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommandArgs(args, OPTIONS);
  // Quieter than other commands: the report is the output; --log-level shows the requests.
  const loaded = await startConfigCommand(io, values, "error");
  if (typeof loaded === "number") return loaded;
  const { config, common } = loaded;
  const report = await runDoctor(common, config, { send: values.send, signal: io.signal });
  io.stdout.write(common.secrets.redact(formatDoctor(report, config, values.config)));
  return report.checks.some((c) => c.verdict === "fail") ? EXIT_RUNTIME : EXIT_OK;
}

export const doctorCommand: Command = { help: HELP, run };
