import { z } from "zod";
import type { Common } from "../../common/common.js";
import { httpUrl } from "../../common/value-schemas.js";
import { cleanLine } from "../../common/sanitize-text.js";
import { ALERT_SEVERITIES, type AlertDocument, type AlertSeverity } from "../../model/alert-document.js";
import { episodeIdOf } from "../../model/alert-status.js";
import type { Delivery, Sink } from "../sink.js";
import type { SinkConfigProblem } from "../errors.js";
import { truncateUnits } from "../escape.js";
import { DIGEST_SHOWN, alertView, digestHeadline, digestLine, statusPrefix } from "../alert-view.js";
import type { HttpSender } from "../http-sender.js";
import { checkUrl } from "../sink-checks.js";
import { defineSink } from "./define-sink.js";
import { createJsonPostSink } from "./json-post-sink.js";

/** PagerDuty's own endpoint for alert events. */
export const PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue";

/** An Events API v2 integration key: 32 letters and digits (PagerDuty's "Integration Key"). */
const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;

const pagerdutyOptions = z.strictObject({
  allow_private_network: z.boolean().optional().meta({ description: "Send to a link-local or cloud metadata address (169.254.0.0/16, fe80::/10, metadata.google.internal …), refused otherwise. Default false." }),
  routing_key: z
    .string()
    .regex(ROUTING_KEY, "not a PagerDuty routing key: the Integration Key of an Events API v2 integration is 32 letters and digits")
    .meta({ description: "Integration Key of an Events API v2 integration on a service or ruleset. Secret." }),
  url: httpUrl.default(PAGERDUTY_EVENTS_URL).meta({ description: `The Events API v2 endpoint. Default ${PAGERDUTY_EVENTS_URL}.` }),
  severity: z.enum(ALERT_SEVERITIES).default("error").meta({ description: "payload.severity of an alert whose rule sets no `severity`. Default error." }),
});

export type PagerDutyOptions = z.output<typeof pagerdutyOptions>;

/** The limits of an event as the Events API v2 documents them. */
export const PAGERDUTY_LIMITS = { summary: 1024, dedupKey: 255, bytes: 512 * 1024 } as const;

export interface PagerDutyTrigger {
  routing_key: string;
  event_action: "trigger";
  dedup_key: string;
  payload: {
    summary: string;
    source: string;
    severity: AlertSeverity;
    timestamp: string;
    component: string;
    class: string;
    custom_details: Record<string, string | number>;
  };
  links: { href: string; text: string }[];
  client: "kaiawatch";
}

export interface PagerDutyResolve {
  routing_key: string;
  event_action: "resolve";
  dedup_key: string;
}

export type PagerDutyEvent = PagerDutyTrigger | PagerDutyResolve;

export function validatePagerDutyOptions(options: PagerDutyOptions): SinkConfigProblem[] {
  const problems: SinkConfigProblem[] = [];
  // Never echo the value: it is the secret.
  if (typeof options.routing_key !== "string" || !ROUTING_KEY.test(options.routing_key)) problems.push({ key: "routing_key", message: "must be the 32-character Integration Key of an Events API v2 integration" });
  checkUrl(problems, "url", options.url, { allowLoopbackHttp: true, allowPrivateNetwork: options.allow_private_network });
  if (!(ALERT_SEVERITIES as readonly unknown[]).includes(options.severity)) problems.push({ key: "severity", message: `must be one of ${ALERT_SEVERITIES.join(", ")}` });
  return problems;
}

const RANK: Record<AlertSeverity, number> = { critical: 3, error: 2, warning: 1, info: 0 };

function severityOf(alert: AlertDocument, fallback: AlertSeverity): AlertSeverity {
  return alert.severity !== undefined && Object.hasOwn(RANK, alert.severity) ? alert.severity : fallback;
}

/** "kaiawatch/mainnet/treasury": where the problem is, in PagerDuty's sense of a source. */
function sourceOf(alert: AlertDocument): string {
  return `kaiawatch/${cleanLine(alert.network, 60)}/${cleanLine(alert.watch, 100)}`;
}

function summaryOf(text: string): string {
  return truncateUnits(cleanLine(text, PAGERDUTY_LIMITS.summary), PAGERDUTY_LIMITS.summary);
}

function trigger(routingKey: string, dedupKey: string, alert: AlertDocument, summary: string, severity: AlertSeverity): PagerDutyTrigger {
  return {
    routing_key: routingKey,
    event_action: "trigger",
    dedup_key: dedupKey,
    payload: {
      summary: summaryOf(summary),
      source: sourceOf(alert),
      severity,
      timestamp: alert.created_at,
      component: cleanLine(alert.source, 60),
      class: cleanLine(alert.rule, 100),
      custom_details: {},
    },
    links: [],
    client: "kaiawatch",
  };
}

/**
 * The event of one alert: `trigger` under the alert's id, or `resolve` under its episode's id
 * (the firing alert's), which is what makes PagerDuty close the incident the trigger opened.
 */
function alertEvent(routingKey: string, alert: AlertDocument, defaultSeverity: AlertSeverity): PagerDutyEvent {
  if (alert.status === "resolved") return { routing_key: routingKey, event_action: "resolve", dedup_key: episodeIdOf(alert) };
  const view = alertView(alert);
  // Under the episode's id: a reminder lands on the incident its first trigger opened (PagerDuty dedups it there), not a new one.
  const event = trigger(routingKey, alert.status === "firing" ? episodeIdOf(alert) : alert.id, alert, `${statusPrefix(view.status, view.repeat)}${view.rule}: ${view.summary}`, severityOf(alert, defaultSeverity));
  // Plain text, already cleaned and cut by the view; PagerDuty shows these as a table.
  // fromEntries defines own properties: a label an event names "__proto__" stays a plain key.
  const details: Array<[string, string | number]> = [["alert id", alert.id], ["rule", view.rule], ["watch", cleanLine(alert.watch, 100)], ["network", cleanLine(alert.network, 60)]];
  if (view.status !== undefined) details.push(["status", view.status]);
  if (view.repeat > 0) details.push(["reminder", view.repeat], ["episode id", episodeIdOf(alert)]);
  for (const field of view.fields) details.push([field.label, field.value]);
  event.payload.custom_details = Object.fromEntries(details);
  event.links = view.links.map((link) => ({ href: link.url, text: link.label }));
  return event;
}

/**
 * The events of a delivery, pure so that their shape and limits are testable. A single alert
 * is one event. In a digest, an alert with a lifecycle keeps its own event (its resolve must
 * find its own trigger), and the one-shot alerts become one trigger under the digest's id.
 */
export function buildPagerDutyEvents(delivery: Delivery, options: Pick<PagerDutyOptions, "routing_key" | "severity">): PagerDutyEvent[] {
  const first = delivery.alerts[0];
  if (delivery.alerts.length === 1 && first !== undefined) return [alertEvent(options.routing_key, first, options.severity)];
  const events: PagerDutyEvent[] = delivery.alerts.filter((alert) => alert.status !== undefined).map((alert) => alertEvent(options.routing_key, alert, options.severity));
  const oneShot = delivery.alerts.filter((alert) => alert.status === undefined);
  const head = oneShot[0];
  if (head !== undefined) {
    const shown = oneShot.slice(0, DIGEST_SHOWN);
    const part: Delivery = { ...delivery, alerts: oneShot };
    const severity = oneShot.map((alert) => severityOf(alert, options.severity)).reduce((a, b) => (RANK[b] > RANK[a] ? b : a));
    const event = trigger(options.routing_key, delivery.id, head, digestHeadline(part, shown.length), severity);
    const details: Array<[string, string | number]> = [["digest id", delivery.id], ["rule", cleanLine(delivery.rule, 100)], ["count", oneShot.length]];
    shown.forEach((alert, i) => {
      const line = digestLine(alert);
      details.push([`#${i + 1}`, line.url === undefined ? line.text : `${line.text} ${line.url}`]);
    });
    event.payload.custom_details = Object.fromEntries(details);
    events.push(event);
  }
  return events;
}

export function createPagerDutySink(common: Common, name: string, options: PagerDutyOptions, sender?: HttpSender): Sink {
  const problems = validatePagerDutyOptions(options);
  // One request per event, in order. A retry sends them all again: PagerDuty folds a
  // repeated trigger into the open alert of its dedup_key and drops a repeated resolve.
  const documents = (delivery: Delivery) => buildPagerDutyEvents(delivery, options);
  return createJsonPostSink(common, { name, type: "pagerduty", problems, url: options.url, secret: options.routing_key, documents }, sender);
}

export const pagerdutySink = defineSink({
  type: "pagerduty",
  options: pagerdutyOptions,
  // The Events API takes about 120 events a minute per integration key.
  defaultRatePerSecond: 1,
  check: validatePagerDutyOptions,
  create: createPagerDutySink,
  preview: (delivery, options) =>
    buildPagerDutyEvents(delivery, { ...options, routing_key: "[routing_key]" })
      .map((event) => JSON.stringify(event, null, 2))
      .join("\n"),
  secretKeys: ["routing_key"],
});
