import { z } from "zod";
import type { Common } from "../../common/common.js";
import { duration, httpUrl } from "../../common/value-schemas.js";
import type { Sink } from "../sink.js";
import type { SinkConfigProblem } from "../errors.js";
import { createHttpSender, type HttpSender } from "../http-sender.js";
import { checkUrl, throwIfProblems } from "../sink-checks.js";
import { defineSink } from "./define-sink.js";

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const heartbeatOptions = z.strictObject({
  allow_private_network: z.boolean().optional().meta({ description: "Ping a link-local or cloud metadata address (169.254.0.0/16, fe80::/10, metadata.google.internal …), refused otherwise. Default false." }),
  url: httpUrl.meta({ description: "The URL pinged while kaiawatch is ready (a healthchecks.io check, a PagerDuty or Opsgenie heartbeat URL, any URL that expects a request every so often); https unless allow_http. Secret." }),
  interval: duration.prefault("1m").meta({ description: "Time between two pings. The outside service's grace period should be longer (e.g. twice this)." }),
  method: z.enum(["GET", "POST", "HEAD"]).default("GET").meta({ description: "The request's method; POST sends an empty JSON object." }),
  timeout: duration.prefault("10s").meta({ description: "Longest a ping may take; a ping that fails is logged and the next one comes at the next interval (no retry)." }),
  headers: z
    .record(z.string().regex(HEADER_NAME, "not an HTTP header name"), z.string().regex(/^[^\r\n]*$/, "a header value cannot contain a line break"))
    .default({})
    .meta({ description: "Extra request headers (e.g. Opsgenie's `Authorization: GenieKey …`). Secret." }),
  allow_http: z.boolean().default(false).meta({ description: "Permit plain http (otherwise https is required)." }),
});

export type HeartbeatOptions = z.output<typeof heartbeatOptions>;

export const HEARTBEAT_TYPE = "heartbeat";

export function validateHeartbeatOptions(options: HeartbeatOptions): SinkConfigProblem[] {
  const problems: SinkConfigProblem[] = [];
  checkUrl(problems, "url", options.url, { allowHttp: options.allow_http, allowPrivateNetwork: options.allow_private_network });
  if (options.interval <= 0) problems.push({ key: "interval", message: "must be longer than 0" });
  // A ping still waiting at the next one would overlap it; the outside service hears one a interval at most.
  if (options.timeout > options.interval) problems.push({ key: "timeout", message: `must not be longer than interval (${options.interval} ms)` });
  return problems;
}

/**
 * A dead man's switch: not a destination of alerts (a rule cannot name it in `notify:`), but a
 * URL pinged every `interval` while kaiawatch is ready, so that an outside service raises the
 * alarm when the pings stop (the daemon died, or /readyz says it is not ready: a wedged tick, a
 * stalled sink …). The daemon drives it (src/daemon/heartbeat-loop.ts); `send` is one ping, what
 * `kaiawatch test-sink` does.
 */
export interface HeartbeatSink extends Sink {
  readonly intervalMs: number;
  ping(signal: AbortSignal): Promise<{ status: number }>;
}

export function createHeartbeatSink(common: Common, name: string, options: HeartbeatOptions, sender: HttpSender = createHttpSender(common)): HeartbeatSink {
  throwIfProblems(name, validateHeartbeatOptions(options));
  common.secrets.add(options.url);
  for (const value of Object.values(options.headers)) common.secrets.add(value);
  const target = `sink ${name} (heartbeat)`;
  const ping = async (signal: AbortSignal) => {
    const answer = await sender.postJson({ url: options.url, method: options.method, body: "{}", headers: options.headers, timeoutMs: options.timeout, target, secrets: Object.values(options.headers) }, signal);
    return { status: answer.status };
  };
  return {
    name,
    type: HEARTBEAT_TYPE,
    intervalMs: options.interval,
    ping,
    async send(_delivery, signal) {
      return await ping(signal);
    },
  };
}

export function isHeartbeatSink(sink: Sink): sink is HeartbeatSink {
  return sink.type === HEARTBEAT_TYPE && typeof (sink as Partial<HeartbeatSink>).ping === "function";
}

export const heartbeatSink = defineSink({
  type: HEARTBEAT_TYPE,
  options: heartbeatOptions,
  check: validateHeartbeatOptions,
  create: (common, name, options) => createHeartbeatSink(common, name, options),
  preview: (_delivery, options) => `${options.method} (the heartbeat URL) every ${options.interval} ms while kaiawatch is ready; alerts are never sent to a heartbeat sink`,
  secretKeys: ["url", "headers"],
});
