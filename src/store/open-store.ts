import { mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { Low } from "lowdb";
import type { Common } from "../common/common.js";
import type { Logger } from "../common/logger.js";
import type { Cursor, OutboxChange, OutboxEntry, OutboxFilter, OutboxState, Store, StoreData, StoreStats } from "./types.js";
import { AtomicFileAdapter } from "./atomic-file-adapter.js";
import { StoreEncoder } from "./store-encoder.js";
import { StoreError } from "./errors.js";
import { createGroupCommit, type GroupCommit } from "./group-commit.js";
import { emptyStoreData, upgradeStoreData } from "./schema.js";
import { acquireStoreLock, type StoreLock } from "./store-lock.js";

export interface OpenStoreOptions {
  path: string;
  /**
   * Read without taking the lock, for listing commands while a daemon runs (the daemon's
   * atomic renames mean a reader always sees a whole file). Mutations are refused.
   */
  readOnly?: boolean;
}

/**
 * Opens the JSON store: takes the lock (unless read-only), reads and checks the file, and
 * upgrades an older schema. A missing file starts an empty store, written at once so that
 * an unwritable location fails at start-up rather than at the first alert.
 */
export async function openStore(common: Common, options: OpenStoreOptions): Promise<Store> {
  const path = resolve(options.path);
  const readOnly = options.readOnly ?? false;
  const logger = common.logger.child({ subsystem: "store" });
  let lock: StoreLock | undefined;
  if (!readOnly) {
    await mkdir(dirname(path), { recursive: true }).catch((error: unknown) => {
      throw new StoreError("KW_STORE_WRITE_FAILED", `cannot create the directory of the store file ${path}: ${(error as Error).message}`, { cause: error });
    });
    lock = await acquireStoreLock(path, logger);
  }
  try {
    const encoder = new StoreEncoder();
    const adapter = new AtomicFileAdapter<StoreData>(path, { serialize: (data) => encoder.encode(data) });
    const raw = await adapter.read();
    const { data, migratedFrom } = raw === null ? { data: emptyStoreData(), migratedFrom: undefined } : upgradeStoreData(raw, path);
    // lowdb's Low holds the data and hands it to our adapter; the group commit decides when.
    const db = new Low<StoreData>(adapter, data);
    const store = new JsonStore(common, logger, db, adapter, encoder, path, readOnly, lock);
    if (migratedFrom !== undefined) logger.info({ path, from: migratedFrom, to: data.schema_version }, "store schema upgraded");
    if (!readOnly && (raw === null || migratedFrom !== undefined)) await store.flush(true);
    return store;
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

class JsonStore implements Store {
  readonly path: string;
  readonly readOnly: boolean;
  private readonly byId = new Map<string, OutboxEntry>();
  // The dispatcher lists pending entries often; every other state is listed rarely (CLI).
  // Both indexes keep the order of addition, which is the order listOutbox promises.
  private pending = new Set<OutboxEntry>();
  private pendingBySink = new Map<string, Set<OutboxEntry>>();
  private readonly groupCommit: GroupCommit;
  private closed = false;
  private writes = 0;
  private failedWrites = 0;
  private lastWriteFailed = false;
  // Counted, not Object.keys() in stats(): the poller reads stats() before every window, and 10,000 sources made that quadratic.
  private cursorCount: number;

  constructor(
    private readonly common: Common,
    private readonly logger: Logger,
    private readonly db: Low<StoreData>,
    private readonly adapter: AtomicFileAdapter<StoreData>,
    private readonly encoder: StoreEncoder,
    path: string,
    readOnly: boolean,
    private readonly lock: StoreLock | undefined,
  ) {
    this.path = path;
    this.readOnly = readOnly;
    for (const entry of db.data.outbox) this.byId.set(entry.id, entry);
    this.cursorCount = Object.keys(db.data.cursors).length;
    this.rebuildPendingIndex();
    this.groupCommit = createGroupCommit(() => this.writeFile());
  }

  private get data(): StoreData {
    return this.db.data;
  }

  getCursor(key: string): Cursor | undefined {
    const cursor = this.data.cursors[key];
    return cursor === undefined ? undefined : { ...cursor };
  }

  listCursors(): Cursor[] {
    return Object.values(this.data.cursors).map((cursor) => ({ ...cursor }));
  }

  async setCursor(cursor: Cursor): Promise<void> {
    this.assertWritable();
    checkCursor(cursor);
    if (!Object.hasOwn(this.data.cursors, cursor.key)) this.cursorCount++;
    this.data.cursors[cursor.key] = { ...cursor };
    await this.groupCommit.request();
  }

  async commitWindow(input: { cursor: Cursor; entries: OutboxEntry[] }): Promise<{ added: number }> {
    this.assertWritable();
    const { cursor, entries } = input;
    checkCursor(cursor);
    const current = this.data.cursors[cursor.key];
    if (current !== undefined && cursor.block < current.block) {
      throw new StoreError(
        "KW_STORE_CURSOR_BACKWARDS",
        `the cursor of ${cursor.key} is at block ${current.block}; a window cannot move it back to ${cursor.block} (use setCursor to rewind)`,
      );
    }
    const added = this.addNew(entries);
    if (current === undefined) this.cursorCount++;
    this.data.cursors[cursor.key] = { ...cursor };
    if (entries.length === 0) {
      // A window without alerts owes no delivery: should a crash lose this advance, the
      // blocks are scanned again and hold nothing. The next write carries it (the engine
      // flushes after each tick), so 10,000 quiet sources cost one write, not one each.
      this.groupCommit.defer();
      return { added };
    }
    await this.groupCommit.request();
    return { added };
  }

  async enqueue(entries: OutboxEntry[]): Promise<{ added: number }> {
    this.assertWritable();
    const added = this.addNew(entries);
    if (added > 0) await this.groupCommit.request();
    return { added };
  }

  private addNew(entries: OutboxEntry[]): number {
    let added = 0;
    for (const entry of entries) {
      if (this.byId.has(entry.id)) continue;
      this.addEntry({ ...entry });
      this.common.metrics.alertsQueued.inc({ sink: entry.sink });
      added++;
    }
    return added;
  }

  listOutbox(filter: OutboxFilter = {}): OutboxEntry[] {
    const due = filter.dueBefore === undefined ? undefined : Date.parse(filter.dueBefore);
    if (due !== undefined && Number.isNaN(due)) throw new TypeError(`dueBefore is not an ISO-8601 date: ${filter.dueBefore}`);
    const candidates: Iterable<OutboxEntry> =
      filter.state === "pending" ? (filter.sink === undefined ? this.pending : (this.pendingBySink.get(filter.sink) ?? [])) : this.data.outbox;
    const out: OutboxEntry[] = [];
    for (const entry of candidates) {
      if (filter.state !== undefined && entry.state !== filter.state) continue;
      if (filter.sink !== undefined && entry.sink !== filter.sink) continue;
      if (due !== undefined && !(Date.parse(entry.next_attempt_at) <= due)) continue;
      out.push({ ...entry });
    }
    return out;
  }

  async updateOutbox(changes: OutboxChange[]): Promise<void> {
    this.assertWritable();
    // Check every change before applying any, following the states the batch itself
    // produces (two changes may name one entry): a batch is all or nothing.
    const states = new Map<string, OutboxState>();
    for (const change of changes) {
      const entry = this.byId.get(change.id);
      if (entry === undefined) throw outboxChangeError(change, "no such outbox entry");
      const state = states.get(change.id) ?? entry.state;
      const problem = transitionProblem(state, change);
      if (problem !== undefined) throw outboxChangeError(change, problem);
      states.set(change.id, stateAfter(state, change));
    }
    let requeued = false;
    for (const change of changes) {
      const entry = this.byId.get(change.id) as OutboxEntry;
      requeued = this.applyChange(entry, change) || requeued;
    }
    if (requeued) this.rebuildPendingIndex();
    if (changes.length > 0) await this.groupCommit.request();
  }

  async pruneDelivered(olderThan: string): Promise<number> {
    this.assertWritable();
    const limit = Date.parse(olderThan);
    if (Number.isNaN(limit)) throw new TypeError(`olderThan is not an ISO-8601 date: ${olderThan}`);
    const keep: OutboxEntry[] = [];
    let removed = 0;
    for (const entry of this.data.outbox) {
      if (entry.state === "delivered" && Date.parse(entry.delivered_at ?? entry.created_at) < limit) {
        this.byId.delete(entry.id);
        removed++;
      } else {
        keep.push(entry);
      }
    }
    if (removed === 0) return 0;
    this.data.outbox = keep;
    await this.groupCommit.request();
    return removed;
  }

  getMeta<T = unknown>(key: string): T | undefined {
    return (Object.hasOwn(this.data.meta, key) ? this.data.meta[key] : undefined) as T | undefined;
  }

  async setMeta(key: string, value: unknown): Promise<void> {
    this.assertWritable();
    // A JSON copy: what is stored is exactly what a restart will read back.
    const text = JSON.stringify(value);
    if (text === undefined) delete this.data.meta[key];
    else this.data.meta[key] = JSON.parse(text) as unknown;
    await this.groupCommit.request();
  }

  /** `force` writes even when nothing changed (the first write of a new or upgraded file). */
  async flush(force = false): Promise<void> {
    if (this.readOnly) return;
    await (force ? this.groupCommit.request() : this.groupCommit.flush());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.flush();
    } finally {
      await this.lock?.release();
    }
  }

  stats(): StoreStats {
    return {
      writes: this.writes,
      failedWrites: this.failedWrites,
      lastWriteFailed: this.lastWriteFailed,
      bytes: this.adapter.bytes,
      outbox: this.data.outbox.length,
      cursors: this.cursorCount,
    };
  }

  private async writeFile(): Promise<void> {
    const started = performance.now();
    try {
      // Low.write hands db.data to the adapter, which serializes it before its first await.
      await this.db.write();
    } catch (error) {
      this.failedWrites++;
      this.lastWriteFailed = true;
      this.logger.warn({ path: this.path, err: error }, "store write failed; the last good file is kept and the next write will persist everything");
      throw error;
    }
    const seconds = (performance.now() - started) / 1000;
    this.writes++;
    this.lastWriteFailed = false;
    this.common.metrics.storeWriteDuration.observe(seconds);
    this.common.metrics.storeSize.set(this.adapter.bytes);
  }

  private assertWritable(): void {
    if (this.readOnly) throw new StoreError("KW_STORE_READ_ONLY", `the store ${this.path} was opened read-only`);
    if (this.closed) throw new StoreError("KW_STORE_CLOSED", `the store ${this.path} is closed`);
  }

  private addEntry(entry: OutboxEntry): void {
    this.data.outbox.push(entry);
    this.byId.set(entry.id, entry);
    if (entry.state === "pending") this.indexPending(entry);
  }

  private indexPending(entry: OutboxEntry): void {
    this.pending.add(entry);
    let bySink = this.pendingBySink.get(entry.sink);
    if (bySink === undefined) this.pendingBySink.set(entry.sink, (bySink = new Set()));
    bySink.add(entry);
  }

  private unindexPending(entry: OutboxEntry): void {
    this.pending.delete(entry);
    this.pendingBySink.get(entry.sink)?.delete(entry);
  }

  /** After a requeue: rebuilt from the outbox array so that the index stays in order of addition. */
  private rebuildPendingIndex(): void {
    this.pending = new Set();
    this.pendingBySink = new Map();
    for (const entry of this.data.outbox) if (entry.state === "pending") this.indexPending(entry);
  }

  /** Applies a checked change; returns true when the entry came back to pending. */
  private applyChange(entry: OutboxEntry, change: OutboxChange): boolean {
    this.encoder.changed(entry);
    switch (change.kind) {
      case "delivered":
        if (entry.state === "delivered") return false;
        this.unindexPending(entry);
        entry.state = "delivered";
        entry.attempts++;
        entry.delivered_at = change.at;
        return false;
      case "failed":
        entry.attempts++;
        entry.last_error = change.error;
        entry.next_attempt_at = change.next_attempt_at;
        return false;
      case "dead":
        if (entry.state === "dead") return false;
        this.unindexPending(entry);
        entry.state = "dead";
        entry.attempts++;
        entry.dead_reason = change.reason;
        return false;
      case "requeue":
        if (entry.state === "pending") return false;
        entry.state = "pending";
        entry.attempts = 0;
        entry.next_attempt_at = change.at;
        // A fresh digest: reusing the old group id would make a receiver drop it as a duplicate.
        delete entry.group_id;
        delete entry.dead_reason;
        return true;
      case "group":
        entry.group_id = change.group_id;
        return false;
    }
  }
}

function transitionProblem(state: OutboxState, change: OutboxChange): string | undefined {
  switch (change.kind) {
    case "delivered":
      return state === "dead" ? "a dead entry must be requeued before it can be delivered" : undefined;
    case "failed":
    case "group":
      return state === "pending" ? undefined : `the entry is ${state}, not pending`;
    case "dead":
      return state === "delivered" ? "a delivered entry cannot become dead" : undefined;
    case "requeue":
      return state === "delivered" ? "a delivered entry cannot be requeued" : undefined;
  }
}

function stateAfter(state: OutboxState, change: OutboxChange): OutboxState {
  switch (change.kind) {
    case "delivered":
      return "delivered";
    case "dead":
      return "dead";
    case "requeue":
      return "pending";
    default:
      return state;
  }
}

function outboxChangeError(change: OutboxChange, problem: string): StoreError {
  return new StoreError("KW_STORE_OUTBOX_CHANGE", `cannot apply "${change.kind}" to outbox entry ${change.id}: ${problem}; no change of this batch was applied`);
}

function checkCursor(cursor: Cursor): void {
  if (typeof cursor.key !== "string" || cursor.key === "" || !Number.isSafeInteger(cursor.block)) {
    throw new TypeError(`a cursor needs a key and an integer block: ${JSON.stringify({ key: cursor.key, block: cursor.block })}`);
  }
}
