import type { Database, Statement } from "better-sqlite3";
import type { Cursor } from "./types.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import { OUTBOX_COLUMNS, entryOfOutboxRow, type OutboxRowOf } from "./outbox-row.js";

/**
 * The version of the store this code writes, in SQLite's `PRAGMA user_version`. The schema
 * started at 3, above the development builds' 2 (cooldowns and silences as meta values),
 * which open-store.ts refuses by name. Each change since is a migration in
 * SQLITE_MIGRATIONS, run by the first process that opens the store to write (the daemon's
 * start, a silence added), under the store lock, in one transaction.
 */
export const SQLITE_SCHEMA_VERSION = 5;

/**
 * What one reader of a `source: both` watch found and the other has not (Store.Witness), as
 * the PostgreSQL store's; a row reported missed keeps its missed_at until pruned.
 */
const WITNESSES_DDL = `
-- What one reader of a \`source: both\` watch found and the other has not (yet); missed_at once reported missed.
CREATE TABLE witnesses (
  alert_id TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('explorer', 'node')),
  watch TEXT NOT NULL,
  family TEXT NOT NULL,
  rule TEXT NOT NULL,
  block INTEGER NOT NULL,
  record_key TEXT NOT NULL,
  summary TEXT NOT NULL,
  transaction_hash TEXT,
  seen_at TEXT NOT NULL,
  missed_at TEXT,
  PRIMARY KEY (alert_id, role)
) WITHOUT ROWID;
CREATE INDEX witnesses_open ON witnesses (block) WHERE missed_at IS NULL;
CREATE INDEX witnesses_missed ON witnesses (missed_at) WHERE missed_at IS NOT NULL;
`;

/**
 * From version N to N + 1, by N. SQLite cannot change a column's constraint in place: a
 * table is built anew beside the old one, filled from it, and renamed over it (SQLite's
 * "generalized ALTER TABLE"); the trigger that names the table is made again after it.
 */
export const SQLITE_MIGRATIONS: Readonly<Record<number, { description: string; sql: string }>> = {
  3: {
    description: "silences on labels (rule may be NULL, matchers) and alerts muted by a route's time interval",
    sql: `
DROP TRIGGER outbox_note_delete;
CREATE TABLE suppressed_v4 (
  entry_id TEXT PRIMARY KEY,
  at TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (reason IN ('cooldown', 'silence', 'inhibited', 'muted'))
) WITHOUT ROWID;
INSERT INTO suppressed_v4 (entry_id, at, reason) SELECT entry_id, at, reason FROM suppressed;
DROP TABLE suppressed;
ALTER TABLE suppressed_v4 RENAME TO suppressed;
CREATE TRIGGER outbox_note_delete AFTER DELETE ON outbox BEGIN
  DELETE FROM suppressed WHERE entry_id = old.id;
END;
CREATE TABLE silences_v4 (
  id TEXT PRIMARY KEY,
  rule TEXT,
  match TEXT NOT NULL,
  matchers TEXT,
  reason TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  removed_at TEXT,
  suppressed INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO silences_v4 (id, rule, match, reason, created_at, expires_at, expires_ms, removed_at, suppressed)
  SELECT id, rule, match, reason, created_at, expires_at, expires_ms, removed_at, suppressed FROM silences;
DROP TABLE silences;
ALTER TABLE silences_v4 RENAME TO silences;
`,
  },
  4: {
    description: "witnesses: what one reader of a `source: both` watch saw and the other not (yet)",
    sql: WITNESSES_DDL,
  },
};

/** The tables a store must have; an SQLite file without them is not a kaiawatch store. */
export const TABLES = ["cursors", "alerts", "alerts_held", "outbox", "outbox_counts", "meta", "cooldowns", "suppressed", "silences", "balance_episodes", "absences", "delivery_attempts", "witnesses"] as const;

/** The tables a migration adds, by the version it brings the store to: a store of an earlier version has none of them yet. */
const TABLES_ADDED: Readonly<Record<number, readonly string[]>> = { 5: ["witnesses"] };

/** The tables a store of this schema version has. */
export function tablesOfVersion(version: number): string[] {
  const later = new Set(Object.entries(TABLES_ADDED).flatMap(([added, names]) => (Number(added) > version ? names : [])));
  return TABLES.filter((name) => !later.has(name));
}

/**
 * An alert is kept once, in `alerts`, however many sinks it goes to: its document (JSON
 * text, ~1 KB and more) never changes, and five copies of it were most of a store whose
 * alerts went to five sinks. The outbox holds one small row per (alert, sink): a delivery.
 * `seq` is the rowid: the order of addition, which listings promise, and rows are appended
 * at the end of the table. The fields that change (state, attempts, times, errors) are
 * columns, so a change rewrites a small row and never touches the document. `due_ms` and
 * `delivered_ms` are the times as numbers, for the indexes. An alert goes when its last
 * delivery row goes (a trigger), so pruning the outbox prunes the documents.
 *
 * `outbox_counts` and `alerts_held` are kept by triggers in the same transactions, so
 * counting by sink and state, and the alerts held, read a few rows instead of the tables.
 */
const DDL = `
CREATE TABLE cursors (
  key TEXT PRIMARY KEY,
  block INTEGER NOT NULL,
  cursor TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE alerts (
  id TEXT PRIMARY KEY,
  document TEXT NOT NULL
);
CREATE TABLE alerts_held (n INTEGER NOT NULL);
INSERT INTO alerts_held (n) VALUES (0);
CREATE TRIGGER alerts_held_insert AFTER INSERT ON alerts BEGIN
  UPDATE alerts_held SET n = n + 1;
END;
CREATE TRIGGER alerts_held_delete AFTER DELETE ON alerts BEGIN
  UPDATE alerts_held SET n = n - 1;
END;

CREATE TABLE outbox (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  alert_id TEXT NOT NULL REFERENCES alerts (id) DEFERRABLE INITIALLY DEFERRED,
  sink TEXT NOT NULL,
  rule TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
  attempts INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  next_attempt_at TEXT NOT NULL,
  due_ms INTEGER NOT NULL,
  group_id TEXT,
  last_error TEXT,
  dead_reason TEXT,
  delivered_at TEXT,
  delivered_ms INTEGER
);
-- The dispatcher's pass: a sink's pending entries in order of addition, due or not.
CREATE INDEX outbox_pending_by_sink ON outbox (sink, seq, due_ms) WHERE state = 'pending';
-- When the next backoff of a sink ends.
CREATE INDEX outbox_pending_due ON outbox (sink, due_ms) WHERE state = 'pending';
-- Listings by state across sinks (CLI, status page), oldest or newest first.
CREATE INDEX outbox_by_state ON outbox (state, seq);
-- Pruning: the oldest deliveries first.
CREATE INDEX outbox_delivered ON outbox (delivered_ms) WHERE state = 'delivered';
CREATE INDEX outbox_groups ON outbox (group_id) WHERE group_id IS NOT NULL;
-- Whether an alert still has a delivery, when one goes.
CREATE INDEX outbox_by_alert ON outbox (alert_id);
CREATE TRIGGER outbox_alert_delete AFTER DELETE ON outbox BEGIN
  DELETE FROM alerts WHERE id = old.alert_id AND NOT EXISTS (SELECT 1 FROM outbox WHERE alert_id = old.alert_id);
END;

CREATE TABLE outbox_counts (
  sink TEXT NOT NULL,
  state TEXT NOT NULL,
  retrying INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (sink, state, retrying)
) WITHOUT ROWID;
CREATE TRIGGER outbox_count_insert AFTER INSERT ON outbox BEGIN
  INSERT INTO outbox_counts (sink, state, retrying, n) VALUES (new.sink, new.state, new.attempts > 0, 1)
    ON CONFLICT (sink, state, retrying) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER outbox_count_delete AFTER DELETE ON outbox BEGIN
  UPDATE outbox_counts SET n = n - 1 WHERE sink = old.sink AND state = old.state AND retrying = (old.attempts > 0);
END;
CREATE TRIGGER outbox_count_update AFTER UPDATE OF sink, state, attempts ON outbox
  WHEN old.sink IS NOT new.sink OR old.state IS NOT new.state OR (old.attempts > 0) IS NOT (new.attempts > 0) BEGIN
  UPDATE outbox_counts SET n = n - 1 WHERE sink = old.sink AND state = old.state AND retrying = (old.attempts > 0);
  INSERT INTO outbox_counts (sink, state, retrying, n) VALUES (new.sink, new.state, new.attempts > 0, 1)
    ON CONFLICT (sink, state, retrying) DO UPDATE SET n = n + 1;
END;

CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- The same three tables as the PostgreSQL store's (postgres/schema.ts), so that both backends
-- keep cooldowns, suppression notes and silences alike. A stamp: when an alert of one (sink,
-- rule, cooldown key) was last let through; entry_id, the single alert that started it.
CREATE TABLE cooldowns (
  sink TEXT NOT NULL,
  rule TEXT NOT NULL,
  key TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  entry_id TEXT,
  PRIMARY KEY (sink, rule, key)
) WITHOUT ROWID;
CREATE INDEX cooldowns_by_age ON cooldowns (at_ms);

-- Entries marked delivered without a send (held by a cooldown, a silence, an inhibit rule or a route's time interval); removed with their entry.
CREATE TABLE suppressed (
  entry_id TEXT PRIMARY KEY,
  at TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (reason IN ('cooldown', 'silence', 'inhibited', 'muted'))
) WITHOUT ROWID;
CREATE TRIGGER outbox_note_delete AFTER DELETE ON outbox BEGIN
  DELETE FROM suppressed WHERE entry_id = old.id;
END;

-- Silences (\`kaiawatch silence\`), written by the daemon and by the CLI on a connection of its
-- own beside it (WAL lets it). A removed one keeps its row (removed_at) until it expires.
-- rule is NULL for a label silence (any rule's alerts); matchers, its label matchers as JSON
-- text (NULL: none).
CREATE TABLE silences (
  id TEXT PRIMARY KEY,
  rule TEXT,
  match TEXT NOT NULL,
  matchers TEXT,
  reason TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  removed_at TEXT,
  suppressed INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- The delivery history (delivery-attempts.ts), as the PostgreSQL store's: one row per entry
-- and attempt, written with the outcome's change; kept for store.retention after at_ms.
-- delivery_id is NULL when it is the alert's id (a single alert's delivery; a digest's is its group id).
CREATE TABLE delivery_attempts (
  seq INTEGER PRIMARY KEY,
  at_ms INTEGER NOT NULL,
  alert_id TEXT NOT NULL,
  sink TEXT NOT NULL,
  rule TEXT NOT NULL,
  delivery_id TEXT,
  attempt INTEGER NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'dead', 'suppressed')),
  status INTEGER,
  latency_ms INTEGER,
  error TEXT
);
-- Listings newest first, since and until, and pruning the oldest.
CREATE INDEX delivery_attempts_by_time ON delivery_attempts (at_ms);
-- One alert's attempts (its page, history --alert).
CREATE INDEX delivery_attempts_by_alert ON delivery_attempts (alert_id, at_ms);

-- The open episode of each (balance rule, address, asset), as the PostgreSQL store's.
CREATE TABLE balance_episodes (
  rule TEXT NOT NULL,
  address TEXT NOT NULL,
  asset TEXT NOT NULL,
  alert TEXT NOT NULL,
  clear INTEGER NOT NULL,
  -- Reminders sent, and when the last was decided (null: none yet; due from the alert's created_at).
  repeats INTEGER NOT NULL DEFAULT 0,
  reminded_at TEXT,
  PRIMARY KEY (rule, address, asset)
) WITHOUT ROWID;

-- What each absence rule has observed (Store.AbsenceState as JSON), as the PostgreSQL store's.
CREATE TABLE absences (
  rule TEXT PRIMARY KEY,
  state TEXT NOT NULL
) WITHOUT ROWID;
`;

/** Creates the tables in an empty database, in the caller's transaction. */
export function createSchema(db: Database): void {
  db.exec(DDL);
  db.exec(WITNESSES_DDL);
  db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
}

/** An outbox row joined with its alert, as SQLite returns it (the alert as JSON text). */
export type OutboxRow = OutboxRowOf<number, string>;

export { OUTBOX_COLUMNS };

export function entryOfRow(row: OutboxRow): OutboxEntry {
  return entryOfOutboxRow(row, JSON.parse(row.alert) as OutboxEntry["alert"]);
}

/** A time as milliseconds for the indexes; an unreadable one sorts first (due at once), as Date.parse comparisons did. */
export function msOf(iso: string | undefined): number | null {
  if (iso === undefined) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? 0 : ms;
}

/** The statement that adds an entry's delivery row unless its id exists; `run(entryParams(entry))`. */
export const INSERT_ENTRY = `INSERT INTO outbox (id, alert_id, sink, rule, state, attempts, created_at, next_attempt_at, due_ms, group_id, last_error, dead_reason, delivered_at, delivered_ms)
  VALUES (@id, @alert_id, @sink, @rule, @state, @attempts, @created_at, @next_attempt_at, @due_ms, @group_id, @last_error, @dead_reason, @delivered_at, @delivered_ms)
  ON CONFLICT (id) DO NOTHING`;

/**
 * The statement that keeps an alert's document unless it is kept already: `run(id, json)`.
 * The first document stored under an id stays: an alert id is the same only for the same
 * rule and record (build-alert.ts), and its deliveries already pending must not change.
 */
export const INSERT_ALERT = "INSERT INTO alerts (id, document) VALUES (?, ?) ON CONFLICT (id) DO NOTHING";

/**
 * What a listing reads: the delivery rows and their alerts' documents. CROSS JOIN makes
 * SQLite walk the outbox (in the listing's index order) and look each alert up by its key,
 * never the other way round.
 */
export const OUTBOX_JOIN = "CROSS JOIN alerts ON alerts.id = outbox.alert_id";

/** The delivery row of an entry (its alert is written apart, once: INSERT_ALERT). */
export function entryParams(entry: OutboxEntry): Record<string, string | number | null> {
  return {
    id: entry.id,
    alert_id: entry.alert.id,
    sink: entry.sink,
    rule: entry.rule,
    state: entry.state,
    attempts: entry.attempts,
    created_at: entry.created_at,
    next_attempt_at: entry.next_attempt_at,
    due_ms: msOf(entry.next_attempt_at),
    group_id: entry.group_id ?? null,
    last_error: entry.last_error ?? null,
    dead_reason: entry.dead_reason ?? null,
    delivered_at: entry.delivered_at ?? null,
    // Pruning goes by delivery time; an entry delivered without one (older files) by its creation.
    delivered_ms: entry.state === "delivered" ? msOf(entry.delivered_at ?? entry.created_at) : null,
  };
}

/**
 * Adds the entries whose id is new, each alert's document once; returns the entries added.
 * A document is written only for an entry that was added (a re-scan of known entries
 * encodes nothing), and once per batch however many sinks share it.
 */
export function insertEntries(insertEntry: Statement, insertAlert: Statement, entries: Iterable<OutboxEntry>): OutboxEntry[] {
  const added: OutboxEntry[] = [];
  let lastAlert: string | undefined;
  for (const entry of entries) {
    if (insertEntry.run(entryParams(entry)).changes === 0) continue;
    added.push(entry);
    // The entries of one alert come together (newOutboxEntries): one insert for the run of them.
    if (entry.alert.id === lastAlert) continue;
    lastAlert = entry.alert.id;
    insertAlert.run(entry.alert.id, JSON.stringify(entry.alert));
  }
  return added;
}

export const UPSERT_CURSOR = "INSERT INTO cursors (key, block, cursor) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET block = excluded.block, cursor = excluded.cursor";

/** The meta key of the generation of a source's followers (Store.followCursor), in both stores. */
export function followersKey(source: string): string {
  return `cursor.followers.${source}`;
}

/**
 * A cursor that follows `followed` (Cursor.follows) as it reads: at the higher of the two
 * blocks, and, when the source's is the higher, updated when the source's was.
 */
export function followingRead(cursor: Cursor, followed: Cursor | undefined): Cursor {
  if (followed === undefined || followed.block <= cursor.block) return { ...cursor };
  return { ...cursor, block: followed.block, updated_at: followed.updated_at };
}

/** A cursor as both stores keep it, in JSON: without what a read fills in (Cursor.followers). */
export function cursorDocument(cursor: Cursor): string {
  const { followers: _, ...stored } = cursor;
  return JSON.stringify(stored);
}

/** The columns of a cursor that are not its key and block, kept as JSON. */
export function cursorParams(cursor: Cursor): [string, number, string] {
  return [cursor.key, cursor.block, cursorDocument(cursor)];
}

/**
 * Writes many entries and cursors at once in one transaction (a benchmark's or a test's seed
 * of a large store). Entries whose id exists are skipped, as in a commit.
 */
export function importAll(db: Database, data: { cursors: Iterable<Cursor>; outbox: Iterable<OutboxEntry> }): void {
  const insertEntry = db.prepare(INSERT_ENTRY);
  const insertAlert = db.prepare(INSERT_ALERT);
  const upsertCursor = db.prepare(UPSERT_CURSOR);
  db.transaction(() => {
    for (const cursor of data.cursors) upsertCursor.run(...cursorParams(cursor));
    insertEntries(insertEntry, insertAlert, data.outbox);
  })();
}

/**
 * The statement that records an attempt beside its change: the entry's alert, sink and rule
 * from its outbox row. Parameters: at_ms, delivery_id (twice), attempt, outcome, status,
 * latency_ms, error, the entry id.
 */
export const INSERT_ATTEMPT = `INSERT INTO delivery_attempts (at_ms, alert_id, sink, rule, delivery_id, attempt, outcome, status, latency_ms, error)
  SELECT ?, alert_id, sink, rule, CASE WHEN ? = alert_id THEN NULL ELSE ? END, ?, ?, ?, ?, ? FROM outbox WHERE id = ?`;
