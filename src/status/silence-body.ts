import { readSilence, type Silence } from "../notify/silences.js";
import { badBody, fieldsOf, type BodyKind, type BodyReading } from "./json-body.js";

/** What `kaiawatch silence add/remove` asks of a running daemon. */
export type SilenceChange = { add: Silence } | { remove: string };

/**
 * The body of POST /api/silences: `{"add": <silence>}` (as `kaiawatch silence add` made it:
 * id, rule, match, reason, created_at, expires_at) or `{"remove": "sil_…"}`.
 */
export const silenceBody: BodyKind<SilenceChange> = { maxBytes: 16 * 1024, check: silenceChangeOf };

function silenceChangeOf(value: unknown): BodyReading<SilenceChange> {
  const wrong = badBody('expected {"add": {"id", "rule" and "match" or "matchers" (or both), "reason", "created_at", "expires_at"}} or {"remove": "<silence id>"}');
  const body = fieldsOf(value);
  if (body === undefined || Object.keys(body).length !== 1) return wrong;
  if (typeof body.remove === "string") return /^sil_[0-9a-f]{8}$/.test(body.remove) ? { ok: true, value: { remove: body.remove } } : wrong;
  const silence = readSilence(body.add);
  if (silence === undefined || !/^sil_[0-9a-f]{8}$/.test(silence.id)) return wrong;
  return { ok: true, value: { add: silence } };
}
