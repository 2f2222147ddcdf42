import { ATTEMPT_OUTCOMES, type AttemptOutcome } from "../model/attempt-outcome.js";
import type { AttemptFilter } from "../store/types.js";

/** Attempts one answer carries when the query names no limit, and at most. */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 5_000;

/**
 * The query of GET /api/history as a store filter: `alert`, `sink`, `rule`, `outcome`,
 * `since` and `until` (ISO-8601), `limit`. Strict about what it reads: an unknown parameter or
 * a bad value is a 400 with the reason, never a listing of something else.
 */
export function parseHistoryQuery(search: URLSearchParams): { ok: true; filter: AttemptFilter & { limit: number } } | { ok: false; error: string } {
  const known = new Set(["alert", "sink", "rule", "outcome", "since", "until", "limit"]);
  for (const key of search.keys()) if (!known.has(key)) return { ok: false, error: `unknown parameter "${key.slice(0, 40)}"; known: ${[...known].join(", ")}` };
  const one = (key: string): string | undefined => {
    const values = search.getAll(key);
    return values.length === 0 ? undefined : values[values.length - 1];
  };
  const filter: AttemptFilter & { limit: number } = { limit: HISTORY_DEFAULT_LIMIT };
  const text = (key: "alert" | "sink" | "rule"): string | undefined => {
    const value = one(key);
    return value === undefined || value === "" ? undefined : value.slice(0, 500);
  };
  const alert = text("alert");
  if (alert !== undefined) filter.alertId = alert;
  const sink = text("sink");
  if (sink !== undefined) filter.sink = sink;
  const rule = text("rule");
  if (rule !== undefined) filter.rule = rule;
  const outcome = one("outcome");
  if (outcome !== undefined) {
    if (!ATTEMPT_OUTCOMES.includes(outcome as AttemptOutcome)) return { ok: false, error: `outcome must be one of ${ATTEMPT_OUTCOMES.join(", ")}` };
    filter.outcome = outcome as AttemptOutcome;
  }
  for (const key of ["since", "until"] as const) {
    const value = one(key);
    if (value === undefined) continue;
    if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(Date.parse(value))) return { ok: false, error: `${key} must be an ISO-8601 time such as 2025-01-01T00:00:00Z` };
    filter[key] = new Date(Date.parse(value)).toISOString();
  }
  const limit = one("limit");
  if (limit !== undefined) {
    if (!/^[1-9]\d{0,8}$/.test(limit) || Number(limit) > HISTORY_MAX_LIMIT) return { ok: false, error: `limit must be a whole number from 1 to ${HISTORY_MAX_LIMIT}` };
    filter.limit = Number(limit);
  }
  return { ok: true, filter };
}
