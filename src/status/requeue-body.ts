import type { IncomingMessage } from "node:http";
import type { DeadLetterSelector } from "../notify/dead-letters.js";
import { readJsonBody } from "./json-body.js";

/** A re-queue request names a few dead letters or all of them: a larger body is a mistake. */
export const MAX_REQUEUE_BODY_BYTES = 64 * 1024;
export const MAX_REQUEUE_IDS = 1000;
const MAX_ID_LENGTH = 300;

export type ParsedRequeue = { ok: true; selector: DeadLetterSelector } | { ok: false; status: 400 | 413 | 415; error: string };

/**
 * Reads the body of POST /api/dead-letters/requeue: JSON `{"all": true}` or `{"ids": [...]}`
 * (entry ids, alert ids or digest ids, as `kaiawatch outbox retry` takes them).
 */
export async function parseRequeueBody(req: IncomingMessage): Promise<ParsedRequeue> {
  const body = await readJsonBody(req, MAX_REQUEUE_BODY_BYTES);
  return body.ok ? selectorOf(body.value) : body;
}

export function selectorOf(value: unknown): ParsedRequeue {
  const wrong: ParsedRequeue = { ok: false, status: 400, error: 'expected {"all": true} or {"ids": ["<entry, alert or digest id>", ...]}' };
  if (value === null || typeof value !== "object" || Array.isArray(value)) return wrong;
  const body = value as Record<string, unknown>;
  const keys = Object.keys(body);
  if (keys.length === 1 && body.all === true) return { ok: true, selector: { all: true } };
  if (keys.length !== 1 || !Array.isArray(body.ids)) return wrong;
  const ids = body.ids as unknown[];
  if (ids.length === 0 || ids.length > MAX_REQUEUE_IDS) return { ok: false, status: 400, error: `ids must name 1 to ${MAX_REQUEUE_IDS} dead letters` };
  if (!ids.every((id): id is string => typeof id === "string" && id.length > 0 && id.length <= MAX_ID_LENGTH)) {
    return { ok: false, status: 400, error: `every id must be a non-empty string of at most ${MAX_ID_LENGTH} characters` };
  }
  return { ok: true, selector: { ids } };
}
