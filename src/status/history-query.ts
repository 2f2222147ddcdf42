import { ATTEMPT_OUTCOMES, type AttemptOutcome } from "../model/attempt-outcome.js";
import type { AttemptFilter } from "../store/types.js";

/** Attempts one answer carries when the query names no limit, and at most. */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 5_000;

export type HistoryFilter = AttemptFilter & { limit: number };

/** The filter's parameters, by the names GET /api/history and `kaiawatch history` (as --NAME) give them. */
type HistoryKey = "alert" | "sink" | "rule" | "outcome" | "since" | "until" | "limit";

/** How a caller reads the filter: its values, the time forms it takes, its largest limit. */
export interface HistoryFilterForms {
  /** The value given for a parameter, undefined when none is. */
  value(key: HistoryKey): string | undefined;
  /** The time a value of `since` or `until` means (ISO-8601), undefined when it means none. */
  time(value: string): string | undefined;
  maxLimit: number;
}

/** A parameter whose value the filter cannot take: the caller says why in its own words. */
export interface BadHistoryValue {
  key: "outcome" | "since" | "until" | "limit";
  value: string;
}

/**
 * The filter of delivery attempts that the status API's query and the history command's
 * options both describe: an empty alert, sink or rule is no filter; an outcome, time or limit
 * the filter cannot take is returned for the caller to report.
 */
export function readHistoryFilter(forms: HistoryFilterForms): { filter: HistoryFilter } | { bad: BadHistoryValue } {
  const filter: HistoryFilter = { limit: HISTORY_DEFAULT_LIMIT };
  const text = (key: "alert" | "sink" | "rule"): string | undefined => {
    const value = forms.value(key);
    return value === "" ? undefined : value;
  };
  const alert = text("alert");
  if (alert !== undefined) filter.alertId = alert;
  const sink = text("sink");
  if (sink !== undefined) filter.sink = sink;
  const rule = text("rule");
  if (rule !== undefined) filter.rule = rule;
  const outcome = forms.value("outcome");
  if (outcome !== undefined) {
    if (!ATTEMPT_OUTCOMES.includes(outcome as AttemptOutcome)) return { bad: { key: "outcome", value: outcome } };
    filter.outcome = outcome as AttemptOutcome;
  }
  for (const key of ["since", "until"] as const) {
    const value = forms.value(key);
    if (value === undefined) continue;
    const time = forms.time(value);
    if (time === undefined) return { bad: { key, value } };
    filter[key] = time;
  }
  const limit = forms.value("limit");
  if (limit !== undefined) {
    if (!/^[1-9]\d{0,8}$/.test(limit) || Number(limit) > forms.maxLimit) return { bad: { key: "limit", value: limit } };
    filter.limit = Number(limit);
  }
  return { filter };
}

/**
 * The query of GET /api/history as a store filter: `alert`, `sink`, `rule`, `outcome`,
 * `since` and `until` (ISO-8601), `limit`. Strict about what it reads: an unknown parameter or
 * a bad value is a 400 with the reason, never a listing of something else.
 */
export function parseHistoryQuery(search: URLSearchParams): { ok: true; filter: HistoryFilter } | { ok: false; error: string } {
  const known = new Set(["alert", "sink", "rule", "outcome", "since", "until", "limit"]);
  for (const key of search.keys()) if (!known.has(key)) return { ok: false, error: `unknown parameter "${key.slice(0, 40)}"; known: ${[...known].join(", ")}` };
  const read = readHistoryFilter({
    value: (key) => {
      // The last of a repeated parameter; an id or a name is cut where none is longer.
      const value = search.getAll(key).at(-1);
      return value !== undefined && (key === "alert" || key === "sink" || key === "rule") ? value.slice(0, 500) : value;
    },
    // Only the full ISO-8601 form: a duration back from now is the command's, which knows its clock.
    time: (value) => (/^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)) ? new Date(Date.parse(value)).toISOString() : undefined),
    maxLimit: HISTORY_MAX_LIMIT,
  });
  if ("filter" in read) return { ok: true, filter: read.filter };
  const { key } = read.bad;
  if (key === "outcome") return { ok: false, error: `outcome must be one of ${ATTEMPT_OUTCOMES.join(", ")}` };
  if (key === "limit") return { ok: false, error: `limit must be a whole number from 1 to ${HISTORY_MAX_LIMIT}` };
  return { ok: false, error: `${key} must be an ISO-8601 time such as 2025-01-01T00:00:00Z` };
}
