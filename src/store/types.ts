import type { AlertDocument } from "../rules/alert.js";

/** Where a source has got to. `block` is the last fully processed block, inclusive. */
export interface Cursor {
  /** The source key from the plan: one cursor per source. */
  key: string;
  watch: string;
  /** The record family the source produces. */
  source: string;
  /** A human description of the source (endpoint, address, filter) for `kaiawatch cursors`. */
  description: string;
  block: number;
  updated_at: string;
}

export type OutboxState = "pending" | "delivered" | "dead";

/** One alert waiting for (or done with) one sink. */
export interface OutboxEntry {
  /** `${alert.id}:${sink}`: unique, and the same on every re-scan of the same record. */
  id: string;
  alert: AlertDocument;
  sink: string;
  rule: string;
  state: OutboxState;
  /** Delivery attempts made so far ("delivered", "failed" and "dead" changes each count one). */
  attempts: number;
  created_at: string;
  next_attempt_at: string;
  /** Set when the dispatcher gathers entries into one digest; stable across retries. */
  group_id?: string;
  last_error?: string;
  dead_reason?: string;
  delivered_at?: string;
}

/**
 * A change to one outbox entry. Allowed transitions:
 * - delivered: pending → delivered (again on a delivered entry: no change);
 * - failed: pending → pending with the error and the next attempt time;
 * - dead: pending → dead (again on a dead entry: no change);
 * - requeue: dead → pending, attempts reset, group cleared (on a pending entry: no change);
 * - group: sets the digest group of a pending entry.
 * Anything else is a programming error: the whole batch is refused and nothing changes.
 */
export type OutboxChange =
  | { id: string; kind: "delivered"; at: string }
  | { id: string; kind: "failed"; at: string; error: string; next_attempt_at: string }
  | { id: string; kind: "dead"; at: string; reason: string }
  | { id: string; kind: "requeue"; at: string }
  | { id: string; kind: "group"; group_id: string };

export interface OutboxFilter {
  sink?: string;
  state?: OutboxState;
  /** Only entries whose next_attempt_at is at or before this ISO-8601 UTC instant. */
  dueBefore?: string;
}

export interface StoreStats {
  /** Successful file writes since the store was opened. */
  writes: number;
  /** Failed file writes since the store was opened. */
  failedWrites: number;
  /** The last file write failed (memory holds changes the file does not): the store is not writable now. */
  lastWriteFailed: boolean;
  /** Bytes of the file after the last successful write (or as read at start). */
  bytes: number;
  outbox: number;
  cursors: number;
}

/**
 * The persistent state of kaiawatch behind a narrow interface, so that a PostgreSQL or
 * Redis implementation can replace the JSON file. Reads are synchronous and served from
 * memory; every mutation applies at once and resolves when it is durable. Returned objects
 * are copies; the nested alert document is shared and must not be mutated.
 */
export interface Store {
  readonly path: string;
  readonly readOnly: boolean;
  getCursor(key: string): Cursor | undefined;
  listCursors(): Cursor[];
  /** Sets a cursor to any block, also backwards (CLI rewind and skip). */
  setCursor(cursor: Cursor): Promise<void>;
  /**
   * The atomic step of guarantee 1: the cursor advance and the window's new outbox entries
   * in one write. Entries whose id already exists (a re-scan after a rewind or a crash) are
   * not added again. A cursor behind the stored one is refused (KW_STORE_CURSOR_BACKWARDS).
   * A window without entries resolves at once: its cursor advance reaches the file with the
   * next write or flush() (a crash before that re-scans blocks that held no alert).
   */
  commitWindow(input: { cursor: Cursor; entries: OutboxEntry[] }): Promise<{ added: number }>;
  /**
   * Adds outbox entries that belong to no source's window (kaiawatch's own operational
   * alerts, `kaiawatch replay --send`) without touching any cursor; like commitWindow, an
   * entry whose id exists is not added again.
   */
  enqueue(entries: OutboxEntry[]): Promise<{ added: number }>;
  /** Matching entries, oldest first (in the order they were added). */
  listOutbox(filter?: OutboxFilter): OutboxEntry[];
  /** Many changes in one write; all or nothing. */
  updateOutbox(changes: OutboxChange[]): Promise<void>;
  /** Removes delivered entries delivered before `olderThan` (ISO); returns how many. */
  pruneDelivered(olderThan: string): Promise<number>;
  /** The stored value itself (not a copy, as meta may be large): treat it as read-only. */
  getMeta<T = unknown>(key: string): T | undefined;
  /** Stores a JSON value (a copy of it); `undefined` removes the key. */
  setMeta(key: string, value: unknown): Promise<void>;
  /** Resolves when everything mutated so far is durable (retrying a write that failed). */
  flush(): Promise<void>;
  /** Flushes, releases the lock; mutations afterwards are refused. */
  close(): Promise<void>;
  stats(): StoreStats;
}

/** The file's shape. */
export interface StoreData {
  schema_version: number;
  cursors: Record<string, Cursor>;
  outbox: OutboxEntry[];
  meta: Record<string, unknown>;
}
