import type { IncomingMessage } from "node:http";
import type { AlertDocument } from "../model/alert-document.js";
import { readJsonBody } from "./json-body.js";

/** An alert a command asks the running daemon to queue (`replay --send`), with the sinks it goes to. */
export interface AlertToQueue {
  alert: AlertDocument;
  sinks: string[];
}

/** A replay of a busy range can find thousands of matches, each with its record. */
const MAX_ALERTS_BODY_BYTES = 32 * 1024 * 1024;
const MAX_ALERTS = 10_000;

export type ParsedAlerts = { ok: true; alerts: AlertToQueue[] } | { ok: false; status: 400 | 413 | 415; error: string };

/**
 * Reads the body of POST /api/alerts: `{"alerts": [{"alert": {…alert document…}, "sinks": ["name", …]}, …]}`.
 * The alert comes from a client that may write (the token, or loopback), as if it had the
 * store; only its shape is checked here, and the daemon checks the sinks.
 */
export async function parseAlertsBody(req: IncomingMessage): Promise<ParsedAlerts> {
  const body = await readJsonBody(req, MAX_ALERTS_BODY_BYTES);
  return body.ok ? alertsOf(body.value) : body;
}

export function alertsOf(value: unknown): ParsedAlerts {
  const wrong = (why: string): ParsedAlerts => ({ ok: false, status: 400, error: `expected {"alerts": [{"alert": {...}, "sinks": ["<sink>", ...]}, ...]}: ${why}` });
  if (value === null || typeof value !== "object" || Array.isArray(value)) return wrong("not an object");
  const list = (value as Record<string, unknown>).alerts;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_ALERTS) return wrong(`alerts must hold 1 to ${MAX_ALERTS} items`);
  const alerts: AlertToQueue[] = [];
  for (const [i, item] of (list as unknown[]).entries()) {
    if (item === null || typeof item !== "object") return wrong(`alerts[${i}] is not an object`);
    const { alert, sinks } = item as Record<string, unknown>;
    if (alert === null || typeof alert !== "object" || Array.isArray(alert)) return wrong(`alerts[${i}].alert is not an object`);
    const doc = alert as Record<string, unknown>;
    if (typeof doc.id !== "string" || doc.id.length === 0 || doc.id.length > 300 || typeof doc.rule !== "string" || typeof doc.summary !== "string") {
      return wrong(`alerts[${i}].alert needs a string id, rule and summary`);
    }
    if (!Array.isArray(sinks) || sinks.length === 0 || !sinks.every((s): s is string => typeof s === "string" && s.length > 0 && s.length <= 200)) {
      return wrong(`alerts[${i}].sinks must name one or more sinks`);
    }
    alerts.push({ alert: alert as AlertDocument, sinks });
  }
  return { ok: true, alerts };
}
