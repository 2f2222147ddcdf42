import { isHeartbeatSink, type HeartbeatSink } from "./sinks/heartbeat.js";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import { ALERT_DOCUMENT_VERSION, type AlertDocument } from "../model/alert-document.js";
import { SinkError, type Delivery, type Sink } from "./sink.js";

/** The rule name of a test alert: what a receiver can filter on. */
export const TEST_RULE = "kaiawatch-test";

/** A clearly labelled alert that no on-chain event caused. */
export function testAlert(network: string, sinkName: string, now: Date): AlertDocument {
  const id = `test-${now.getTime().toString(36)}-${randomBytes(4).toString("hex")}`;
  return {
    version: ALERT_DOCUMENT_VERSION,
    id,
    rule: TEST_RULE,
    watch: "test-sink",
    source: "event_logs",
    network,
    block: 0,
    transaction_hash: null,
    datetime: now.toISOString(),
    summary: `Test alert from kaiawatch test-sink for sink ${sinkName}: no on-chain event happened. If you can read this, the sink works.`,
    links: {},
    record: { test: true, note: "sent by `kaiawatch test-sink`; not an on-chain record" },
    created_at: now.toISOString(),
  };
}

export interface TestSendResult {
  accepted: boolean;
  /** What happened, in the user's terms, secrets scrubbed; printable on a terminal. */
  report: string;
}

/** Sends one test alert through `sink`, at once and once (no outbox, no retries). */
export async function sendTestAlert(common: Common, sink: Sink, network: string, signal: AbortSignal): Promise<TestSendResult> {
  const label = `sink ${sink.name} (${sink.type})`;
  if (isHeartbeatSink(sink)) return sendTestPing(common, sink, label, signal);
  const alert = testAlert(network, sink.name, new Date(common.now()));
  const delivery: Delivery = { id: alert.id, rule: TEST_RULE, alerts: [alert], attempt: 1 };
  const started = performance.now();
  try {
    await sink.send(delivery, signal);
    return { accepted: true, report: `${label}: accepted the test alert in ${Math.round(performance.now() - started)} ms (delivery id ${delivery.id}).` };
  } catch (error) {
    return { accepted: false, report: `${label}: ${describeFailure(common, error, label)}` };
  }
}

/** A heartbeat sink carries no alert: the test is one ping, as the daemon sends every interval. */
async function sendTestPing(common: Common, sink: HeartbeatSink, label: string, signal: AbortSignal): Promise<TestSendResult> {
  const started = performance.now();
  try {
    const { status } = await sink.ping(signal);
    return { accepted: true, report: `${label}: answered the ping with HTTP ${status} in ${Math.round(performance.now() - started)} ms (the daemon pings every ${sink.intervalMs} ms while ready).` };
  } catch (error) {
    const message = common.secrets.redact(printable(describeError(error))).replace(`: ${label}: `, ": ");
    return { accepted: false, report: `${label}: the ping failed: ${message}\n  The daemon would log it and ping again at the next interval; the outside service raises the alarm if the pings stay away.` };
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
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
