import type pg from "pg";
import type { OutboxEntry, OutboxState } from "../../model/outbox-entry.js";

/** What one query needs: a pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

export const OUTBOX_COLUMNS = "seq, id, sink, rule, state, attempts, created_at, next_attempt_at, group_id, last_error, dead_reason, delivered_at, alert";

/** An outbox row as node-postgres returns it (bigint as a string, json parsed). */
export interface PgOutboxRow {
  seq: string;
  id: string;
  sink: string;
  rule: string;
  state: OutboxState;
  attempts: number;
  created_at: string;
  next_attempt_at: string;
  group_id: string | null;
  last_error: string | null;
  dead_reason: string | null;
  delivered_at: string | null;
  alert: OutboxEntry["alert"];
}

export function entryOfPgRow(row: PgOutboxRow): OutboxEntry {
  const entry: OutboxEntry = {
    id: row.id,
    alert: row.alert,
    sink: row.sink,
    rule: row.rule,
    state: row.state,
    attempts: row.attempts,
    created_at: row.created_at,
    next_attempt_at: row.next_attempt_at,
  };
  if (row.group_id !== null) entry.group_id = row.group_id;
  if (row.last_error !== null) entry.last_error = row.last_error;
  if (row.dead_reason !== null) entry.dead_reason = row.dead_reason;
  if (row.delivered_at !== null) entry.delivered_at = row.delivered_at;
  return entry;
}

