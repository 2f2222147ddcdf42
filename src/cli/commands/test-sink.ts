import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Common } from "../../common/common.js";
import { describeError, isKaiawatchError } from "../../common/errors.js";
import type { Config } from "../../config/index.js";
import { createSink } from "../../notify/create-sink.js";
import { SinkError, type Delivery, type Sink } from "../../notify/sink.js";
import { createConsoleSink } from "../../notify/sinks/console.js";
import { ALERT_DOCUMENT_VERSION, type AlertDocument } from "../../model/alert-document.js";
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, type Command, type CommandIO } from "../command.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, UsageError, createCommandCommon, loadConfigForCommand, parseCommandArgs } from "../bootstrap.js";

/** The rule name of the test alert: what a receiver can filter on. */
export const TEST_RULE = "kaiawatch-test";

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

/** A clearly labelled alert that no on-chain event caused. */
export function testAlert(config: Config, sinkName: string, now: Date): AlertDocument {
  const id = `test-${now.getTime().toString(36)}-${randomBytes(4).toString("hex")}`;
  return {
    version: ALERT_DOCUMENT_VERSION,
    id,
    rule: TEST_RULE,
    watch: "test-sink",
    source: "event_logs",
    network: config.chain.network,
    block: 0,
    transaction_hash: null,
    datetime: now.toISOString(),
    summary: `Test alert from kaiawatch test-sink for sink ${sinkName}: no on-chain event happened. If you can read this, the sink works.`,
    links: {},
    record: { test: true, note: "sent by `kaiawatch test-sink`; not an on-chain record" },
    created_at: now.toISOString(),
  };
}

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
  let common: Common;
  let config: Config;
  let name: string | undefined;
  try {
    const { values, positionals } = parseCommandArgs(args, CONFIG_OPTIONS, true);
    if (positionals.length > 1) throw new UsageError(`one sink at a time: got ${positionals.join(", ")}`);
    name = positionals[0];
    const loaded = await loadConfigForCommand(io, values.config);
    if (typeof loaded === "number") return loaded;
    config = loaded.config;
    // Quiet by default: the command's own report is the output; --log-level shows more.
    common = createCommandCommon(io, { config, secrets: loaded.secrets, logLevel: values["log-level"] ?? "warn", logFormat: values["log-format"] });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`kaiawatch test-sink: ${error.message}\nRun \`kaiawatch test-sink --help\` for the options.\n`);
    return EXIT_USAGE;
  }
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
  const label = `sink ${name} (${sink.type})`;
  const alert = testAlert(config, name, new Date(common.now()));
  const delivery: Delivery = { id: alert.id, rule: TEST_RULE, alerts: [alert], attempt: 1 };
  const started = performance.now();
  try {
    await sink.send(delivery, io.signal);
    const ms = Math.round(performance.now() - started);
    io.stdout.write(`${label}: accepted the test alert in ${ms} ms (delivery id ${delivery.id}).\n`);
    return EXIT_OK;
  } catch (error) {
    io.stdout.write(`${label}: ${describeFailure(common, error, label)}\n`);
    return EXIT_RUNTIME;
  } finally {
    await sink.close?.().catch(() => undefined);
  }
}

/** What the daemon would do with this failure, in the user's terms; secrets scrubbed. */
function describeFailure(common: Common, error: unknown, label: string): string {
  // Sink errors start with the same label the report line starts with: say it once.
  const message = common.secrets.redact(printable(describeError(error))).replace(`: ${label}: `, ": ");
  const details = error instanceof SinkError && error.details !== undefined ? `\n  ${common.secrets.redact(printable(error.details))}` : "";
  if (error instanceof SinkError && error.permanent) {
    return `permanent error: ${message}${details}\n  The daemon would not retry this: the alert would become a dead letter at once. Check the sink's settings.`;
  }
  const pause = error instanceof SinkError && error.retryAfterMs !== undefined ? ` (the receiver asked for a pause of ${Math.ceil(error.retryAfterMs / 1000)} s)` : "";
  return `retryable error: ${message}${details}\n  The daemon would keep the alert in the outbox and retry it with backoff${pause}.`;
}

/** Names and receiver answers are shown to a terminal: no control or bidi characters. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export const testSinkCommand: Command = {
  name: "test-sink",
  summary: "send a test alert through one sink and report what happened",
  help: HELP,
  run,
};
