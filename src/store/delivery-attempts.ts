import { truncate } from "../common/text.js";
import { ATTEMPT_OUTCOMES, type AttemptOutcome } from "../model/attempt-outcome.js";
import type { AttemptFilter, AttemptNote, DeliveryAttempt, OutboxChange } from "./types.js";

/**
 * The delivery history's rows, the same in SQLite and PostgreSQL: what a change's AttemptNote
 * becomes, how a filter becomes a WHERE clause, and how a row reads back. One row per outbox
 * entry per attempt (a digest of ten alerts sent once is ten rows: each alert's page shows it).
 *
 * A row is kept small, because a busy sink writes one per alert it delivers: the time as
 * milliseconds only (the ISO text is rebuilt exactly, since the dispatcher writes
 * `toISOString()` of a millisecond clock), and no delivery id when it is the alert's own (a
 * single alert is delivered under its id, the usual case; a digest's group id is kept).
 */

/** An error text is cut to this many characters: a receiver's answer is quoted in full nowhere. */
export const ATTEMPT_ERROR_MAX = 300;

/** The columns of the history table, in INSERT order after the time. */
export interface AttemptParams {
  at_ms: number;
  delivery_id: string;
  attempt: number;
  outcome: AttemptOutcome;
  status: number | null;
  latency_ms: number | null;
  error: string | null;
}

/** The history row a change records, or undefined when it carries no note (requeue, group, or a change made outside a send). */
export function attemptOfChange(change: OutboxChange): AttemptParams | undefined {
  if (change.kind !== "delivered" && change.kind !== "failed" && change.kind !== "dead" && change.kind !== "defer") return undefined;
  const note: AttemptNote | undefined = change.history;
  if (note === undefined) return undefined;
  const atMs = Date.parse(change.at);
  if (Number.isNaN(atMs)) throw new TypeError(`the change of ${change.id} has no ISO-8601 time: ${change.at}`);
  const outcome: AttemptOutcome = change.kind === "defer" ? "suppressed" : change.kind === "delivered" ? (change.suppressed !== undefined ? "suppressed" : "delivered") : change.kind;
  return {
    at_ms: atMs,
    delivery_id: note.delivery_id,
    attempt: note.attempt,
    outcome,
    status: note.status !== undefined && Number.isSafeInteger(note.status) ? note.status : null,
    latency_ms: note.latency_ms !== undefined && Number.isFinite(note.latency_ms) ? Math.max(0, Math.round(note.latency_ms)) : null,
    error: note.error === undefined ? null : truncate(note.error, ATTEMPT_ERROR_MAX),
  };
}

/** A history row as the drivers return it (PostgreSQL's bigints as text). */
export interface AttemptRow {
  at_ms: number | string;
  alert_id: string;
  sink: string;
  rule: string;
  delivery_id: string | null;
  attempt: number;
  outcome: AttemptOutcome;
  status: number | null;
  latency_ms: number | null;
  error: string | null;
}

/** What a listing selects. */
export const ATTEMPT_COLUMNS = "at_ms, alert_id, sink, rule, delivery_id, attempt, outcome, status, latency_ms, error";

export function attemptOfRow(row: AttemptRow): DeliveryAttempt {
  const attempt: DeliveryAttempt = {
    at: new Date(Number(row.at_ms)).toISOString(),
    alert_id: row.alert_id,
    sink: row.sink,
    rule: row.rule,
    delivery_id: row.delivery_id ?? row.alert_id,
    attempt: row.attempt,
    outcome: row.outcome,
  };
  if (row.status !== null) attempt.status = row.status;
  if (row.latency_ms !== null) attempt.latency_ms = row.latency_ms;
  if (row.error !== null) attempt.error = row.error;
  return attempt;
}

/**
 * The WHERE clause and parameters of a listing; `placeholder(n)` names the n-th parameter
 * (SQLite `?`, PostgreSQL `$n`). Bad values are programming errors (the CLI and the API check
 * what users give): a TypeError.
 */
export function attemptQuery(filter: AttemptFilter, placeholder: (n: number) => string): { where: string; params: Array<string | number>; limit: number | undefined } {
  const clauses: string[] = [];
  const params: Array<string | number> = [];
  const add = (sql: (p: string) => string, value: string | number) => {
    params.push(value);
    clauses.push(sql(placeholder(params.length)));
  };
  if (filter.alertId !== undefined) add((p) => `alert_id = ${p}`, filter.alertId);
  if (filter.sink !== undefined) add((p) => `sink = ${p}`, filter.sink);
  if (filter.rule !== undefined) add((p) => `rule = ${p}`, filter.rule);
  if (filter.outcome !== undefined) {
    if (!ATTEMPT_OUTCOMES.includes(filter.outcome)) throw new TypeError(`not an attempt outcome: ${String(filter.outcome)}`);
    add((p) => `outcome = ${p}`, filter.outcome);
  }
  if (filter.since !== undefined) add((p) => `at_ms >= ${p}`, msOfFilter("since", filter.since));
  if (filter.until !== undefined) add((p) => `at_ms <= ${p}`, msOfFilter("until", filter.until));
  if (filter.limit !== undefined && (!Number.isSafeInteger(filter.limit) || filter.limit < 0)) throw new TypeError(`limit must be a whole number ≥ 0, not ${filter.limit}`);
  return { where: clauses.length > 0 ? ` WHERE ${clauses.join(" AND ")}` : "", params, limit: filter.limit };
}

function msOfFilter(name: string, iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new TypeError(`${name} is not an ISO-8601 date: ${iso}`);
  return ms;
}

/** A prune's bound, checked as pruneDelivered checks its own. */
export function checkPrune(olderThan: string, limit: number | undefined): number {
  const before = Date.parse(olderThan);
  if (Number.isNaN(before)) throw new TypeError(`olderThan is not an ISO-8601 date: ${olderThan}`);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new TypeError(`limit must be a whole number ≥ 1, not ${limit}`);
  return before;
}
