import type { Common } from "../../common/common.js";
import { describeError, isKaiawatchError } from "../../common/errors.js";
import type { Config } from "../../config/index.js";
import { createSink } from "../../notify/create-sink.js";
import type { Sink } from "../../notify/sink.js";
import { TEST_RULE, printable, sendTestAlert } from "../../notify/test-alert.js";
import { createConsoleSink } from "../../notify/sinks/console.js";
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, type Command, type CommandIO } from "../command.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, UsageError, parseCommandArgs, startConfigCommand } from "../bootstrap.js";

const HELP = `Usage: kaiawatch test-sink NAME [options]

Sends one test alert through the sink NAME of the config, at once and once (no outbox,
no retries), and reports what happened: accepted, a retryable error (the daemon would try
again later) or a permanent error (the daemon would make a dead letter). The alert says
plainly that it is a test; its rule is "${TEST_RULE}". A file sink gets it as a JSON line
like any other alert.

Errors name the sink and the receiver's answer, never its URL, token or password.

Exit codes: 0 the sink accepted the alert; 1 it did not; 2 a bad config, or no sink NAME
(the configured sinks are listed).

Options:
${CONFIG_OPTIONS_HELP}
`;

function sinkList(config: Config): string {
  const names = Object.keys(config.sinks);
  return names.length === 0 ? "the config has no sinks" : `configured sinks: ${names.join(", ")}`;
}

function buildSink(common: Common, io: CommandIO, name: string, config: Config): Sink {
  const sinkConfig = config.sinks[name]!;
  // The console sink prints where this command prints, so the test shows up in its output.
  if (sinkConfig.type === "console") return createConsoleSink(common, name, {}, io.stdout);
  return createSink(common, name, sinkConfig);
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, CONFIG_OPTIONS, true);
  if (positionals.length > 1) throw new UsageError(`one sink at a time: got ${positionals.join(", ")}`);
  const name = positionals[0];
  const loaded = await startConfigCommand(io, values);
  if (typeof loaded === "number") return loaded;
  const { config, common } = loaded;
  if (name === undefined) {
    io.stderr.write(`kaiawatch test-sink: name the sink to test (${sinkList(config)})\n`);
    return EXIT_USAGE;
  }
  if (!Object.hasOwn(config.sinks, name)) {
    io.stderr.write(`kaiawatch test-sink: no sink named "${printable(name)}" (${sinkList(config)})\n`);
    return EXIT_USAGE;
  }

  let sink: Sink;
  try {
    sink = buildSink(common, io, name, config);
  } catch (error) {
    if (!isKaiawatchError(error)) throw error;
    io.stderr.write(`kaiawatch test-sink: ${common.secrets.redact(describeError(error))}\n`);
    return EXIT_USAGE;
  }
  try {
    const result = await sendTestAlert(common, sink, config.chain.network, io.signal);
    io.stdout.write(`${result.report}\n`);
    return result.accepted ? EXIT_OK : EXIT_RUNTIME;
  } finally {
    await sink.close?.().catch(() => undefined);
  }
}

export const testSinkCommand: Command = { help: HELP, run };
