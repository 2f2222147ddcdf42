import type { Cursor, OutboxCount, OutboxCountFilter, OutboxFilter, Store, StoreStats } from "./types.js";
import type { OutboxEntry } from "../model/outbox-entry.js";

/**
 * The shape `Store` takes next: the same methods and meanings, but reads return promises,
 * because a store shared by replicas (PostgreSQL) is read over the network and cannot
 * answer from memory. The SQLite store will return resolved promises. To be folded into
 * types.ts once every caller awaits its reads.
 */
export interface AsyncStore extends Omit<Store, "getCursor" | "listCursors" | "listOutbox" | "countOutbox" | "outboxCounts" | "nextAttemptAfter" | "getMeta" | "stats"> {
  getCursor(key: string): Promise<Cursor | undefined>;
  listCursors(): Promise<Cursor[]>;
  listOutbox(filter?: OutboxFilter): Promise<OutboxEntry[]>;
  countOutbox(filter?: OutboxCountFilter): Promise<number>;
  outboxCounts(): Promise<OutboxCount[]>;
  nextAttemptAfter(sink: string, after: string): Promise<string | undefined>;
  /** A copy of the stored value (other replicas may change it at any time). */
  getMeta<T = unknown>(key: string): Promise<T | undefined>;
  stats(): Promise<StoreStats>;
}
