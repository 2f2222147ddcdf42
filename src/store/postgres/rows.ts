import type pg from "pg";
import type { OutboxEntry } from "../../model/outbox-entry.js";
import { OUTBOX_COLUMNS, entryOfOutboxRow, type OutboxRowOf } from "../outbox-row.js";

/** What one query needs: a pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

export { OUTBOX_COLUMNS };

/** An outbox row as node-postgres returns it (bigint as a string, json parsed). */
export type PgOutboxRow = OutboxRowOf<string, OutboxEntry["alert"]>;

export function entryOfPgRow(row: PgOutboxRow): OutboxEntry {
  return entryOfOutboxRow(row, row.alert);
}

