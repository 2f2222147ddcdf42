import type { AlertDocument } from "../model/alert-document.js";
import { badBody, fieldsOf, type BodyKind, type BodyReading } from "./json-body.js";

/** An alert a command asks the running daemon to queue (`replay --send`), with the sinks it goes to. */
export interface AlertToQueue {
  alert: AlertDocument;
  sinks: string[];
}

const MAX_ALERTS = 10_000;

/**
 * The body of POST /api/alerts: `{"alerts": [{"alert": {…alert document…}, "sinks": ["name", …]}, …]}`.
 * The alert comes from a client that may write (the token, or loopback), as if it had the
 * store; only its shape is checked here, and the daemon checks the sinks. A replay of a busy
 * range can find thousands of matches, each with its record: hence the size.
 */
export const alertsBody: BodyKind<AlertToQueue[]> = { maxBytes: 32 * 1024 * 1024, check: alertsOf };

function alertsOf(value: unknown): BodyReading<AlertToQueue[]> {
  const wrong = (why: string) => badBody(`expected {"alerts": [{"alert": {...}, "sinks": ["<sink>", ...]}, ...]}: ${why}`);
  const body = fieldsOf(value);
  if (body === undefined) return wrong("not an object");
  const list = body.alerts;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_ALERTS) return wrong(`alerts must hold 1 to ${MAX_ALERTS} items`);
  const alerts: AlertToQueue[] = [];
  for (const [i, item] of (list as unknown[]).entries()) {
    // An array item passes here, and is refused for its missing alert.
    if (item === null || typeof item !== "object") return wrong(`alerts[${i}] is not an object`);
    const { alert, sinks } = item as Record<string, unknown>;
    const doc = fieldsOf(alert);
    if (doc === undefined) return wrong(`alerts[${i}].alert is not an object`);
    if (typeof doc.id !== "string" || doc.id.length === 0 || doc.id.length > 300 || typeof doc.rule !== "string" || typeof doc.summary !== "string") {
      return wrong(`alerts[${i}].alert needs a string id, rule and summary`);
    }
    if (!Array.isArray(sinks) || sinks.length === 0 || !sinks.every((s): s is string => typeof s === "string" && s.length > 0 && s.length <= 200)) {
      return wrong(`alerts[${i}].sinks must name one or more sinks`);
    }
    alerts.push({ alert: alert as AlertDocument, sinks });
  }
  return { ok: true, value: alerts };
}
