import type { IncomingMessage } from "node:http";
import { readSilence, type Silence } from "../notify/silences.js";
import { readJsonBody } from "./json-body.js";

const MAX_SILENCE_BODY_BYTES = 16 * 1024;

/** What `kaiawatch silence add/remove` asks of a running daemon. */
export type SilenceChange = { add: Silence } | { remove: string };

export type ParsedSilenceChange = { ok: true; change: SilenceChange } | { ok: false; status: 400 | 413 | 415; error: string };

/**
 * Reads the body of POST /api/silences: `{"add": <silence>}` (as `kaiawatch silence add`
 * made it: id, rule, match, reason, created_at, expires_at) or `{"remove": "sil_…"}`.
 */
export async function parseSilenceBody(req: IncomingMessage): Promise<ParsedSilenceChange> {
  const body = await readJsonBody(req, MAX_SILENCE_BODY_BYTES);
  return body.ok ? silenceChangeOf(body.value) : body;
}

export function silenceChangeOf(value: unknown): ParsedSilenceChange {
  const wrong: ParsedSilenceChange = { ok: false, status: 400, error: 'expected {"add": {"id", "rule", "match", "reason", "created_at", "expires_at"}} or {"remove": "<silence id>"}' };
  if (value === null || typeof value !== "object" || Array.isArray(value)) return wrong;
  const body = value as Record<string, unknown>;
  if (Object.keys(body).length !== 1) return wrong;
  if (typeof body.remove === "string") return /^sil_[0-9a-f]{8}$/.test(body.remove) ? { ok: true, change: { remove: body.remove } } : wrong;
  const silence = readSilence(body.add);
  if (silence === undefined || !/^sil_[0-9a-f]{8}$/.test(silence.id)) return wrong;
  return { ok: true, change: { add: silence } };
}
