import type { DeadLetterSelector } from "../notify/dead-letters.js";
import { badBody, fieldsOf, type BodyKind, type BodyReading } from "./json-body.js";

/** A re-queue request names a few dead letters or all of them: a larger body is a mistake. */
const MAX_REQUEUE_BODY_BYTES = 64 * 1024;
const MAX_REQUEUE_IDS = 1000;
const MAX_ID_LENGTH = 300;

/**
 * The body of POST /api/dead-letters/requeue: JSON `{"all": true}` or `{"ids": [...]}`
 * (entry ids, alert ids or digest ids, as `kaiawatch outbox retry` takes them).
 */
export const requeueBody: BodyKind<DeadLetterSelector> = { maxBytes: MAX_REQUEUE_BODY_BYTES, check: selectorOf };

function selectorOf(value: unknown): BodyReading<DeadLetterSelector> {
  const wrong = badBody('expected {"all": true} or {"ids": ["<entry, alert or digest id>", ...]}');
  const body = fieldsOf(value);
  if (body === undefined) return wrong;
  const keys = Object.keys(body);
  if (keys.length === 1 && body.all === true) return { ok: true, value: { all: true } };
  if (keys.length !== 1 || !Array.isArray(body.ids)) return wrong;
  const ids = body.ids as unknown[];
  if (ids.length === 0 || ids.length > MAX_REQUEUE_IDS) return badBody(`ids must name 1 to ${MAX_REQUEUE_IDS} dead letters`);
  if (!ids.every((id): id is string => typeof id === "string" && id.length > 0 && id.length <= MAX_ID_LENGTH)) {
    return badBody(`every id must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
  }
  return { ok: true, value: { ids } };
}
