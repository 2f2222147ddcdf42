import type { OutboxEntry } from "../model/outbox-entry.js";

/**
 * What a listing selects, the same in SQLite and PostgreSQL: the outbox's columns (one
 * delivery row per alert and sink) and the document of its alert, from `alerts` (joined).
 */
export const OUTBOX_COLUMNS = "outbox.seq, outbox.id, sink, rule, state, attempts, created_at, next_attempt_at, group_id, last_error, dead_reason, delivered_at, alerts.document AS alert";

/** The entry's optional fields, which are NULL columns in a row. */
type NullableColumn = "group_id" | "last_error" | "dead_reason" | "delivered_at";

/**
 * An outbox row as a driver returns it: the entry's fields as columns, its optional ones NULL
 * when absent; `seq` and `alert` differ in type between the two (number or bigint text; JSON text or parsed).
 */
export type OutboxRowOf<Seq, Alert> = Omit<OutboxEntry, NullableColumn | "alert"> & { [K in NullableColumn]: string | null } & { seq: Seq; alert: Alert };

/** The entry of a row whose alert the caller has already read (parsed or not, by driver); NULL columns become absent fields. */
export function entryOfOutboxRow(row: OutboxRowOf<unknown, unknown>, alert: OutboxEntry["alert"]): OutboxEntry {
  const entry: OutboxEntry = { id: row.id, alert, sink: row.sink, rule: row.rule, state: row.state, attempts: row.attempts, created_at: row.created_at, next_attempt_at: row.next_attempt_at };
  if (row.group_id !== null) entry.group_id = row.group_id;
  if (row.last_error !== null) entry.last_error = row.last_error;
  if (row.dead_reason !== null) entry.dead_reason = row.dead_reason;
  if (row.delivered_at !== null) entry.delivered_at = row.delivered_at;
  return entry;
}
