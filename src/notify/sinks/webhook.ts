import { z } from "zod";
import type { Common } from "../../common/common.js";
import { duration, httpUrl } from "../../common/value-schemas.js";
import type { Delivery, Sink } from "../sink.js";
import type { SinkConfigProblem } from "../errors.js";
import type { AlertDocument } from "../../model/alert-document.js";
import { ALERT_DOCUMENT_VERSION } from "../../model/alert-document.js";
import { createHttpSender, type HttpSender } from "../http-sender.js";
import { decodeWebhookSecret, standardWebhookHeaders } from "../standard-webhooks.js";
import { checkTimeout, checkUrl, throwIfProblems } from "../sink-checks.js";
import { defineSink } from "./define-sink.js";

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const webhookOptions = z.strictObject({
  allow_private_network: z.boolean().optional().meta({ description: "Send to a link-local or cloud metadata address (169.254.0.0/16, fe80::/10, metadata.google.internal …), refused otherwise. Default false." }),
  url: httpUrl.meta({ description: "Receiver URL; https unless allow_http. Secret." }),
  /** A Standard Webhooks secret (`whsec_` + base64); requests are signed when set. */
  secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/=]+$/, 'not a Standard Webhooks secret: it starts with "whsec_" followed by base64')
    .optional()
    .meta({ description: "Standard Webhooks signing secret (whsec_…). Secret." }),
  /** Extra request headers (e.g. Authorization). */
  headers: z
    .record(z.string().regex(HEADER_NAME, "not an HTTP header name"), z.string().regex(/^[^\r\n]*$/, "a header value cannot contain a line break"))
    .default({}),
  /** Milliseconds. */
  timeout: duration.prefault("10s"),
  /** Permit plain http (otherwise https is required). */
  allow_http: z.boolean().default(false),
});

export type WebhookOptions = z.output<typeof webhookOptions>;

/** The body of a digest: several alerts of one rule in one request. */
export interface DigestDocument {
  version: typeof ALERT_DOCUMENT_VERSION;
  type: "digest";
  /** The delivery id, also sent as `webhook-id`. */
  id: string;
  rule: string;
  count: number;
  alerts: AlertDocument[];
}

/** Headers the sink owns: a custom header may not replace the body type or the signature. */
const RESERVED = new Set(["content-type", "content-length", "host", "transfer-encoding", "connection", "webhook-id", "webhook-timestamp", "webhook-signature"]);
const SECRET_HEADER = /auth|token|key|secret|signature|cookie|password/i;

export function validateWebhookOptions(options: WebhookOptions): SinkConfigProblem[] {
  const problems: SinkConfigProblem[] = [];
  checkUrl(problems, "url", options.url, { allowHttp: options.allow_http, allowPrivateNetwork: options.allow_private_network });
  if (options.secret !== undefined && (typeof options.secret !== "string" || decodeWebhookSecret(options.secret) === undefined)) {
    problems.push({ key: "secret", message: "must be a Standard Webhooks secret: whsec_ followed by base64 (e.g. from `openssl rand -base64 32`)" });
  }
  for (const [header, value] of Object.entries(options.headers)) {
    if (!HEADER_NAME.test(header)) problems.push({ key: `headers.${header}`, message: "is not a valid header name" });
    else if (RESERVED.has(header.toLowerCase())) problems.push({ key: `headers.${header}`, message: "is set by kaiawatch and cannot be replaced" });
    if (typeof value !== "string" || /[\r\n\0]/.test(value)) problems.push({ key: `headers.${header}`, message: "must be a one-line string" });
  }
  checkTimeout(problems, "timeout", options.timeout);
  return problems;
}

/** The JSON body of a delivery: the alert document itself, or a digest document. */
export function buildWebhookBody(delivery: Delivery): string {
  const first = delivery.alerts[0];
  if (delivery.alerts.length === 1 && first !== undefined) return JSON.stringify(first);
  const digest: DigestDocument = { version: ALERT_DOCUMENT_VERSION, type: "digest", id: delivery.id, rule: delivery.rule, count: delivery.alerts.length, alerts: delivery.alerts };
  return JSON.stringify(digest);
}

export function createWebhookSink(common: Common, name: string, options: WebhookOptions, sender: HttpSender = createHttpSender(common)): Sink {
  throwIfProblems(name, validateWebhookOptions(options));
  common.secrets.add(options.secret);
  for (const [header, value] of Object.entries(options.headers)) if (SECRET_HEADER.test(header)) common.secrets.add(value);
  const key = options.secret === undefined ? undefined : decodeWebhookSecret(options.secret);
  const target = `sink ${name} (webhook)`;
  // Every header value counts as a secret (secretKeys below): a receiver that quotes the request back must not put one in the error.
  const secrets = [...(options.secret === undefined ? [] : [options.secret]), ...Object.values(options.headers)];
  return {
    name,
    type: "webhook",
    async send(delivery, signal) {
      const body = buildWebhookBody(delivery);
      // The id is the delivery's, the same on every retry, so the receiver can drop a duplicate.
      // Unsigned requests carry the id and timestamp too: deduplication needs no secret.
      const timestamp = Math.floor(common.now() / 1000);
      const signature = key === undefined ? { "webhook-id": delivery.id, "webhook-timestamp": String(timestamp) } : standardWebhookHeaders(key, delivery.id, timestamp, body);
      const headers = { ...options.headers, ...signature };
      const answer = await sender.postJson({ url: options.url, body, headers, timeoutMs: options.timeout, target, secrets }, signal);
      return { status: answer.status };
    },
  };
}

export const webhookSink = defineSink({
  type: "webhook",
  options: webhookOptions,
  check: validateWebhookOptions,
  create: (common, name, options) => createWebhookSink(common, name, options),
  preview: (delivery) => JSON.stringify(JSON.parse(buildWebhookBody(delivery)), null, 2),
  secretKeys: ["url", "secret", "headers"],
});
