import { randomInt } from "node:crypto";
import { statSync } from "node:fs";
import { performance } from "node:perf_hooks";
import BetterSqlite3, { type Database, type Statement } from "better-sqlite3";
import type { Common } from "../common/common.js";
import type { Logger } from "../common/logger.js";
import { StoreError } from "./errors.js";
import { createCheckpointer, type Checkpointer } from "./checkpointer.js";
import { createGroupCommit, type GroupCommit } from "./group-commit.js";
import { checkOutboxChanges } from "./outbox-transitions.js";
import { ATTEMPT_COLUMNS, attemptOfChange, attemptOfRow, attemptQuery, checkPrune, type AttemptRow } from "./delivery-attempts.js";
import { cursorParams, entryOfRow, followersKey, followingRead, INSERT_ALERT, INSERT_ATTEMPT, INSERT_ENTRY, insertEntries, msOf, OUTBOX_COLUMNS, OUTBOX_JOIN, UPSERT_CURSOR, type OutboxRow } from "./sqlite-schema.js";
import type { StoreLock } from "./store-lock.js";
import type { AbsenceState, AttemptFilter, BalanceEpisode, BalanceEpisodeChange, CooldownStamp, DeliveryAttempt, Cursor, MissedWitness, OutboxChange, OutboxCount, OutboxCountFilter, OutboxFilter, Store, StoreFaults, StoreStats, SuppressedNote, Witness, WitnessRole } from "./types.js";
import { missedByRole, otherRole, WITNESS_COLUMNS, witnessOfRow, witnessParams, type WitnessRow } from "./witness-rows.js";
import { checkEpisodeChanges, episodeConflict } from "./balance-episodes.js";
import type { AlertDocument } from "../model/alert-document.js";
import type { SilenceStore, StoredSilence } from "./silence-store.js";
import { SILENCE_COLUMNS, createSqliteSilences, silenceOfSqliteRow, type SqliteSilenceRow } from "./sqlite-silences.js";
import type { OutboxEntry, OutboxState } from "../model/outbox-entry.js";
import type { WriteBeacon } from "../common/stall-beacon.js";

const STATES: ReadonlySet<OutboxState> = new Set(["pending", "delivered", "dead"]);

/**
 * A checkpoint (copying the WAL's pages into the database file) is asked of the checkpoint
 * thread once this many commits have gone into the WAL since the last one. Should the thread
 * fail or fall behind, at four times as many the store runs one itself after a commit,
 * waiting for the thread's if one is under way, which keeps the WAL bounded whatever happens.
 */
const CHECKPOINT_AFTER_COMMITS = 200;

/**
 * How long a change made with `durable: false` may wait for a commit. SQLite's COMMIT holds
 * the thread for its fsync: one commit per delivery outcome held a sink to one delivery per
 * fsync. Gathered over this window, a busy sink's outcomes share one.
 */
const LAZY_COMMIT_MS = 20;

/** How long a write beside the daemon (`kaiawatch silence`) waits for the daemon's commit, as busy_timeout does for the daemon. */
const BESIDE_WAIT_MS = 5_000;

/** SQLite result codes that mean the disk refused a write (full, read-only, an I/O error). */
function isDiskError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|PROTOCOL)/.test(code);
}

/** SQLite's verdict on a damaged database (SQLITE_CORRUPT, SQLITE_NOTADB and their extended codes). */
export function isCorruption(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}

/**
 * The store in one SQLite database (WAL mode, synchronous=FULL). Mutations apply at once in
 * an open transaction, so that the next read sees them, and the group commit ends that
 * transaction with one COMMIT (one fsync of the WAL) for everything of the moment; a failed
 * COMMIT rolls them all back and rejects their callers. Cursors and meta, which are small,
 * are also kept in memory; the outbox is only on disk, read through indexes.
 */
export class SqliteStore implements Store {
  readonly path: string;
  readonly readOnly: boolean;
  /** The silences (sqlite-silences.ts): written through the group commit, or on a CLI's connection of its own. */
  readonly silences: SilenceStore;
  private readonly cursors = new Map<string, Cursor>();
  private readonly meta = new Map<string, unknown>();
  private readonly groupCommit: GroupCommit;
  private readonly statements = new Map<string, Statement>();
  private readonly savepoint: (fn: () => unknown) => unknown;
  private closed = false;
  private writes = 0;
  private failedWrites = 0;
  private lastWriteFailed = false;
  private bytes = 0;
  /** stats().outbox, counted again only after entries were added or removed: the poller reads stats() before every window. */
  private outboxTotal: number | undefined;
  /** stats().alerts, read again (one row) only after entries were added or removed. */
  private alertsTotal: number | undefined;
  private uncheckpointed = 0;
  private checkpointer: Checkpointer | undefined;
  private checkpointerFailed = false;
  /** The thread's checkpoint is done: the few commits made meanwhile are copied here (see committed). */
  private finishCheckpoint = false;
  private lazyTimer: NodeJS.Timeout | undefined;
  /** The store's identity, written into page 1 by every commit (see touchIdentity). */
  private readonly identity: number;
  /**
   * Set when SQLite found the database damaged at run time: from then on every write is
   * refused with it (writing on would spread the damage, and a checkpoint would copy it into
   * the file), and reads that meet the damage throw it instead of SQLite's raw error.
   */
  private corruption: StoreError | undefined;

  constructor(
    private readonly common: Common,
    private readonly logger: Logger,
    private readonly db: Database,
    path: string,
    readOnly: boolean,
    private readonly lock: StoreLock | undefined,
    /** The files whose sizes make up stats().bytes (none for a store in memory). */
    private readonly files: readonly string[],
    /**
     * Read-only, but its silences written in short transactions of this connection: the CLI's
     * `silence add/remove` beside a running daemon, which holds the lock (WAL lets a second
     * writer wait its turn: busy_timeout).
     */
    silencesWritable = false,
    /** Where each write's start and end are told (the daemon's stall beacon), and a test's faults. */
    private readonly around: { beacon?: WriteBeacon; faults?: StoreFaults } = {},
  ) {
    this.path = path;
    this.readOnly = readOnly;
    this.silences = createSqliteSilences({
      statement: (sql) => this.statement(sql),
      write: silencesWritable ? (fn) => this.writeBeside(fn) : (fn) => this.write(fn),
    });
    // Beside the daemon the connection never blocks the thread waiting for the write lock (writeBeside waits without).
    if (silencesWritable) db.pragma("busy_timeout = 0");
    // Inside the open transaction, better-sqlite3 runs this as a SAVEPOINT: one mutation
    // that throws half-way is undone alone, and the others of the moment stay.
    this.savepoint = db.transaction((fn: () => unknown) => fn());
    // A store made before identities were kept gets one with its first commit.
    const identity = db.pragma("application_id", { simple: true }) as number;
    this.identity = identity !== 0 || readOnly ? identity : randomInt(1, 2 ** 31);
    this.loadCaches();
    this.measureBytes();
    this.groupCommit = createGroupCommit(() => this.commit());
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  private loadCaches(): void {
    this.cursors.clear();
    // Each row's JSON makes strings of its own: the texts many rows repeat (a family, the
    // description and followed key of a shared source's positions, a commit's time) are kept once.
    const texts = new Map<string, string>();
    const once = (text: string) => texts.get(text) ?? (texts.set(text, text), text);
    for (const row of this.statement("SELECT cursor FROM cursors").all() as Array<{ cursor: string }>) {
      const cursor = JSON.parse(row.cursor) as Cursor;
      this.cursors.set(cursor.key, memoryCursor(cursor, once));
    }
    this.meta.clear();
    for (const row of this.statement("SELECT key, value FROM meta").all() as Array<{ key: string; value: string }>) {
      this.meta.set(row.key, JSON.parse(row.value) as unknown);
    }
  }

  private measureBytes(): void {
    let bytes = 0;
    for (const file of this.files) {
      try {
        bytes += statSync(file).size;
      } catch {
        // The WAL does not exist between a clean close and the first write.
      }
    }
    this.bytes = bytes;
  }

  /**
   * Runs `fn` in the transaction of the moment (opening one), undoing its own changes if it
   * throws. A disk error that makes SQLite roll the whole transaction back is reported as a
   * failed write, and what memory holds is read again from the database.
   */
  private mutate<T>(fn: () => T): T {
    this.assertWritable();
    this.around.beacon?.writeStarted();
    try {
      const began = !this.db.inTransaction;
      if (began) this.db.exec("BEGIN IMMEDIATE");
      const before = began ? this.totalChanges() : 0;
      const result = this.savepoint(fn) as T;
      // A mutation that changed nothing (a prune with nothing to prune, entries all known)
      // asks for no commit: ended here, its transaction would hold the write lock until the
      // next commit, and `kaiawatch silence` beside the daemon could not write meanwhile.
      if (began && this.totalChanges() === before) this.db.exec("COMMIT");
      return result;
    } catch (error) {
      if (isCorruption(error)) throw this.damaged(error);
      if (!isDiskError(error)) throw error;
      this.writeFailed(error);
      throw this.writeError(error);
    } finally {
      this.around.beacon?.writeEnded();
    }
  }

  /** A write to the disk (a COMMIT, a probe, a checkpoint): the beacon is told while it holds the thread. */
  private writing<T>(fn: () => T): T {
    this.around.beacon?.writeStarted();
    try {
      return fn();
    } finally {
      this.around.beacon?.writeEnded();
    }
  }

  /**
   * Writes the store's identity into page 1 in the transaction of the moment. Every commit
   * carries page 1 this way, so every write-ahead log that holds a commit of this store
   * names the store, and a log beside the wrong database is refused at open (store-files.ts).
   * SQLite writes the page even when the value is unchanged: one page more per commit.
   */
  private touchIdentity(): void {
    if (this.identity !== 0) this.db.pragma(`application_id = ${this.identity}`);
  }

  /**
   * SQLite found the database damaged: the transaction is undone, writes stop, and the error
   * says so with KW_STORE_CORRUPT (logged once). Reads that do not meet the damage go on.
   */
  private damaged(error: unknown): StoreError {
    if (this.corruption === undefined) {
      this.corruption = new StoreError(
        "KW_STORE_CORRUPT",
        `the store file ${this.path} is damaged (SQLite: ${(error as Error).message}); kaiawatch stopped writing it: stop kaiawatch, keep a copy of the file and its -wal, and repair it (sqlite3 .recover) or move it away to start empty`,
        { cause: error },
      );
      this.logger.error({ path: this.path, err: this.corruption }, "the store is damaged; writes stopped");
      try {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
      } catch {
        // SQLite may already have rolled it back.
      }
    }
    return this.corruption;
  }

  /** A read, with SQLite's corruption errors turned into KW_STORE_CORRUPT. */
  private read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (isCorruption(error)) throw this.damaged(error);
      throw error;
    }
  }

  private totalChanges(): number {
    return (this.statement("SELECT total_changes() AS n").get() as { n: number }).n;
  }

  /** A mutation that resolves once durable. */
  private async write<T>(fn: () => T): Promise<T> {
    const result = this.mutate(fn);
    await this.groupCommit.request();
    return result;
  }

  /**
   * A short transaction of its own on a connection beside the daemon's. SQLITE_BUSY (the
   * daemon is committing) is retried between turns of the event loop rather than in SQLite's
   * busy wait, which would hold the thread (and a daemon in the same process with it).
   */
  private async writeBeside<T>(fn: () => T): Promise<T> {
    const deadline = performance.now() + BESIDE_WAIT_MS;
    for (;;) {
      // Read-only store, writable silences: only damage or a close stops this write.
      if (this.corruption !== undefined) throw this.corruption;
      if (this.closed) throw new StoreError("KW_STORE_CLOSED", `the store ${this.path} is closed`);
      try {
        return this.db
          .transaction(() => {
            const result = fn();
            this.touchIdentity();
            return result;
          })
          .immediate();
      } catch (error) {
        if (isCorruption(error)) throw this.damaged(error);
        if ((error as { code?: unknown }).code !== "SQLITE_BUSY" || performance.now() > deadline) throw this.writeError(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async getCursor(key: string): Promise<Cursor | undefined> {
    const cursor = this.cursors.get(key);
    return cursor === undefined ? undefined : this.readCursor(cursor);
  }

  async listCursors(): Promise<Cursor[]> {
    return [...this.cursors.values()].map((cursor) => this.readCursor(cursor));
  }

  /** A copy of a stored cursor, a follower's at the block it reads as (see Cursor.follows). */
  private readCursor(cursor: Cursor): Cursor {
    const read = cursor.follows === undefined ? { ...cursor } : followingRead(cursor, this.cursors.get(cursor.follows));
    const followers = this.meta.get(followersKey(cursor.key)) as number | undefined;
    if (followers !== undefined) read.followers = followers;
    return read;
  }

  async setCursor(cursor: Cursor): Promise<void> {
    checkCursor(cursor);
    this.mutate(() => this.putCursor(cursor));
    await this.groupCommit.request();
  }

  async followCursor(input: { source: string; followers: readonly Cursor[] }): Promise<{ generation: number }> {
    const { source, followers } = input;
    for (const follower of followers) checkCursor(follower);
    const generation = this.mutate(() => {
      const kept = new Set(followers.map((f) => f.key));
      for (const cursor of this.cursors.values()) {
        if (cursor.follows !== source || kept.has(cursor.key)) continue;
        const { follows: _, followers: __, ...detached } = this.readCursor(cursor);
        this.putCursor(detached, source);
      }
      for (const follower of followers) this.putCursor({ ...follower, follows: source }, source);
      return this.bumpFollowers(source);
    });
    await this.groupCommit.request();
    return { generation };
  }

  /** A change of who follows `source` (or from where), in the transaction of the moment. */
  private bumpFollowers(source: string): number {
    const generation = ((this.meta.get(followersKey(source)) as number | undefined) ?? 0) + 1;
    this.putMeta(followersKey(source), generation);
    return generation;
  }

  async moveCursor(cursor: Cursor): Promise<{ before?: number }> {
    // One process holds the store: no other writer to fence.
    const stored = this.cursors.get(cursor.key);
    const before = stored === undefined ? undefined : this.readCursor(stored).block;
    await this.setCursor(cursor);
    return before === undefined ? {} : { before };
  }

  /** Writes a cursor in the transaction of the moment; `settling`: the source whose followers followCursor is setting (it counts that change once). */
  private putCursor(cursor: Cursor, settling?: string): void {
    const copy = memoryCursor(cursor);
    // A follower written to follow something else, or nothing (an operator's move): its source's followers changed.
    const followed = this.cursors.get(copy.key)?.follows;
    if (followed !== undefined && followed !== copy.follows && followed !== settling) this.bumpFollowers(followed);
    this.statement(UPSERT_CURSOR).run(...cursorParams(copy));
    this.cursors.set(copy.key, copy);
  }

  async commitWindow(input: { cursor: Cursor; entries: OutboxEntry[]; absences?: readonly AbsenceState[]; witnesses?: readonly Witness[] }): Promise<{ added: number }> {
    const { cursor, entries, absences = [], witnesses = [] } = input;
    checkCursor(cursor);
    this.assertWritable();
    const stored = this.cursors.get(cursor.key);
    const current = stored === undefined ? undefined : this.readCursor(stored);
    if (current !== undefined && cursor.block < current.block) {
      throw new StoreError(
        "KW_STORE_CURSOR_BACKWARDS",
        `the cursor of ${cursor.key} is at block ${current.block}; a window cannot move it back to ${cursor.block} (use setCursor to rewind)`,
      );
    }
    const added = this.mutate(() => {
      const n = this.addNew(entries);
      this.putCursor(cursor);
      // In the cursor's transaction: deferred with it (below), never apart from it.
      for (const absence of absences) this.statement("INSERT INTO absences (rule, state) VALUES (?, ?) ON CONFLICT (rule) DO UPDATE SET state = excluded.state").run(absence.rule, JSON.stringify(absence));
      this.addWitnesses(witnesses);
      return n;
    });
    if (entries.length === 0) {
      // A window without alerts owes no delivery: should a crash lose this advance, the
      // blocks are scanned again and hold nothing. The next commit carries it (the engine
      // flushes after each tick), so 10,000 quiet sources cost one commit, not one each.
      this.groupCommit.defer();
      return { added };
    }
    await this.groupCommit.request();
    return { added };
  }

  /**
   * A witness whose alert the other reader has seen already pairs with it: the other's open
   * row goes (a missed one stays, the record of its report) and this one is not kept.
   */
  private addWitnesses(witnesses: readonly Witness[]): void {
    for (const witness of witnesses) {
      const other = otherRole(witness.role);
      if (this.statement("SELECT 1 FROM witnesses WHERE alert_id = ? AND role = ?").get(witness.alert_id, other) !== undefined) {
        this.statement("DELETE FROM witnesses WHERE alert_id = ? AND role = ? AND missed_at IS NULL").run(witness.alert_id, other);
        continue;
      }
      this.statement(`INSERT INTO witnesses (${WITNESS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (alert_id, role) DO NOTHING`).run(...witnessParams(witness));
    }
  }

  async listWitnesses(filter: { missed: boolean; limit?: number }): Promise<Witness[]> {
    const sql = filter.missed
      ? `SELECT ${WITNESS_COLUMNS} FROM witnesses WHERE missed_at IS NOT NULL ORDER BY missed_at DESC, alert_id, role LIMIT ?`
      : `SELECT ${WITNESS_COLUMNS} FROM witnesses WHERE missed_at IS NULL ORDER BY block, alert_id, role LIMIT ?`;
    return this.read(() => (this.statement(sql).all(filter.limit ?? -1) as WitnessRow[]).map(witnessOfRow));
  }

  async countWitnesses(): Promise<{ open: number; missed: Record<WitnessRole, number> }> {
    return this.read(() => {
      const open = (this.statement("SELECT count(*) AS n FROM witnesses WHERE missed_at IS NULL").get() as { n: number }).n;
      const missed = this.statement("SELECT role, count(*) AS n FROM witnesses WHERE missed_at IS NOT NULL GROUP BY role").all() as Array<{ role: string; n: number }>;
      return { open, missed: missedByRole(missed) };
    });
  }

  async settleWitnesses(input: { missed: readonly MissedWitness[]; at: string }): Promise<{ marked: Array<Pick<Witness, "alert_id" | "role">>; added: number }> {
    if (input.missed.length === 0) {
      this.assertWritable();
      return { marked: [], added: 0 };
    }
    const outcome = this.mutate(() => {
      const marked: Array<Pick<Witness, "alert_id" | "role">> = [];
      let added = 0;
      for (const { alert_id, role, entries } of input.missed) {
        // Both readers committed it at once, neither seeing the other's row: a pair after all.
        if (this.statement("SELECT 1 FROM witnesses WHERE alert_id = ? AND role = ?").get(alert_id, otherRole(role)) !== undefined) {
          this.statement("DELETE FROM witnesses WHERE alert_id = ? AND missed_at IS NULL").run(alert_id);
          continue;
        }
        if (this.statement("UPDATE witnesses SET missed_at = ? WHERE alert_id = ? AND role = ? AND missed_at IS NULL").run(input.at, alert_id, role).changes === 0) continue;
        marked.push({ alert_id, role });
        added += this.addNew(entries);
      }
      return { marked, added };
    });
    await this.groupCommit.request();
    return outcome;
  }

  async pruneWitnesses(olderThan: string, limit?: number): Promise<number> {
    checkPrune(olderThan, limit);
    const removed = this.mutate(
      () => this.statement("DELETE FROM witnesses WHERE (alert_id, role) IN (SELECT alert_id, role FROM witnesses INDEXED BY witnesses_missed WHERE missed_at IS NOT NULL AND missed_at < ? ORDER BY missed_at LIMIT ?)").run(olderThan, limit ?? -1).changes,
    );
    if (removed > 0) await this.groupCommit.request();
    return removed;
  }

  async enqueue(entries: OutboxEntry[]): Promise<{ added: number }> {
    const added = this.mutate(() => this.addNew(entries));
    if (added > 0) await this.groupCommit.request();
    return { added };
  }

  /** Adds the entries whose id is new; counts them in the metrics once they are in. */
  private addNew(entries: OutboxEntry[]): number {
    const bySink = new Map<string, number>();
    for (const entry of insertEntries(this.statement(INSERT_ENTRY), this.statement(INSERT_ALERT), entries)) {
      bySink.set(entry.sink, (bySink.get(entry.sink) ?? 0) + 1);
    }
    let added = 0;
    if (bySink.size > 0) this.outboxTotal = this.alertsTotal = undefined;
    for (const [sink, n] of bySink) {
      this.common.metrics.alertsQueued.inc({ sink }, n);
      added += n;
    }
    return added;
  }

  async listAbsences(rules?: readonly string[]): Promise<AbsenceState[]> {
    const rows = this.statement("SELECT rule, state FROM absences ORDER BY rule").all() as Array<{ rule: string; state: string }>;
    const wanted = rules === undefined ? undefined : new Set(rules);
    return rows.filter((row) => wanted === undefined || wanted.has(row.rule)).map((row) => JSON.parse(row.state) as AbsenceState);
  }

  async listBalanceEpisodes(): Promise<BalanceEpisode[]> {
    const rows = this.statement("SELECT rule, address, asset, alert, clear, repeats, reminded_at FROM balance_episodes ORDER BY rule, address, asset").all() as Array<{ rule: string; address: string; asset: string; alert: string; clear: number; repeats: number; reminded_at: string | null }>;
    return rows.map((row) => ({ rule: row.rule, address: row.address, asset: row.asset, alert: JSON.parse(row.alert) as AlertDocument, clear: row.clear, repeats: row.repeats, reminded_at: row.reminded_at }));
  }

  /** One process holds the file: the lease is ignored, and a conflict means a caller read a stale episode. */
  async commitBalanceEpisodes(input: { changes: readonly BalanceEpisodeChange[]; entries: OutboxEntry[] }): Promise<{ added: number }> {
    checkEpisodeChanges(input.changes);
    if (input.changes.length === 0 && input.entries.length === 0) {
      this.assertWritable();
      return { added: 0 };
    }
    const added = this.mutate(() => {
      const stored = this.statement("SELECT json_extract(alert, '$.id') AS id FROM balance_episodes WHERE rule = ? AND address = ? AND asset = ?");
      for (const change of input.changes) {
        const id = (stored.get(change.rule, change.address, change.asset) as { id: string } | undefined)?.id ?? null;
        // Thrown inside the savepoint: the changes made so far in this write are undone.
        if (id !== change.expect) throw episodeConflict(change, id);
        if (change.next === null) this.statement("DELETE FROM balance_episodes WHERE rule = ? AND address = ? AND asset = ?").run(change.rule, change.address, change.asset);
        else {
          this.statement(
            "INSERT INTO balance_episodes (rule, address, asset, alert, clear, repeats, reminded_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (rule, address, asset) DO UPDATE SET alert = excluded.alert, clear = excluded.clear, repeats = excluded.repeats, reminded_at = excluded.reminded_at",
          ).run(change.rule, change.address, change.asset, JSON.stringify(change.next.alert), change.next.clear, change.next.repeats, change.next.reminded_at);
        }
      }
      return this.addNew(input.entries);
    });
    await this.groupCommit.request();
    return { added };
  }

  async listOutbox(filter: OutboxFilter = {}): Promise<OutboxEntry[]> {
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (filter.state !== undefined) {
      if (!STATES.has(filter.state)) throw new TypeError(`not an outbox state: ${String(filter.state)}`);
      // A literal, not a parameter: SQLite uses a partial index only when the query names its condition.
      where.push(`state = '${filter.state}'`);
    }
    if (filter.sink !== undefined) {
      where.push("sink = ?");
      params.push(filter.sink);
    }
    if (filter.dueBefore !== undefined) {
      const due = Date.parse(filter.dueBefore);
      if (Number.isNaN(due)) throw new TypeError(`dueBefore is not an ISO-8601 date: ${filter.dueBefore}`);
      where.push("due_ms <= ?");
      params.push(due);
    }
    if (filter.groupId !== undefined) {
      where.push("group_id = ?");
      params.push(filter.groupId);
    }
    // The dispatcher's pass: without the hint SQLite's planner takes the due-time index and
    // sorts every due entry of the sink to return the first thousand.
    const hint = filter.state === "pending" && filter.sink !== undefined && filter.groupId === undefined ? " INDEXED BY outbox_pending_by_sink" : "";
    let sql = `SELECT ${OUTBOX_COLUMNS} FROM outbox${hint} ${OUTBOX_JOIN}${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY seq ${filter.newestFirst === true ? "DESC" : "ASC"}`;
    if (filter.limit !== undefined) {
      if (!Number.isSafeInteger(filter.limit) || filter.limit < 0) throw new TypeError(`limit must be a whole number ≥ 0, not ${filter.limit}`);
      sql += " LIMIT ?";
      params.push(filter.limit);
    }
    return this.read(() => (this.statement(sql).all(...params) as OutboxRow[]).map(entryOfRow));
  }

  async countOutbox(filter: OutboxCountFilter = {}): Promise<number> {
    return this.countOutboxNow(filter);
  }

  private countOutboxNow(filter: OutboxCountFilter = {}): number {
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (filter.sink !== undefined) {
      where.push("sink = ?");
      params.push(filter.sink);
    }
    if (filter.state !== undefined) {
      where.push("state = ?");
      params.push(filter.state);
    }
    if (filter.retrying !== undefined) {
      where.push("retrying = ?");
      params.push(filter.retrying ? 1 : 0);
    }
    const sql = `SELECT coalesce(sum(n), 0) AS n FROM outbox_counts${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""}`;
    return this.read(() => (this.statement(sql).get(...params) as { n: number }).n);
  }

  async outboxCounts(): Promise<OutboxCount[]> {
    const sql = `SELECT sink, state, sum(n) AS count, sum(CASE WHEN retrying THEN n ELSE 0 END) AS retrying
      FROM outbox_counts GROUP BY sink, state HAVING sum(n) > 0 ORDER BY sink, state`;
    return this.read(() => this.statement(sql).all() as OutboxCount[]);
  }

  async nextAttemptAfter(sink: string, after: string): Promise<string | undefined> {
    const ms = Date.parse(after);
    if (Number.isNaN(ms)) throw new TypeError(`after is not an ISO-8601 date: ${after}`);
    const row = this.read(
      () => this.statement("SELECT next_attempt_at FROM outbox WHERE state = 'pending' AND sink = ? AND due_ms > ? ORDER BY due_ms LIMIT 1").get(sink, ms) as { next_attempt_at: string } | undefined,
    );
    return row?.next_attempt_at;
  }

  async updateOutbox(changes: OutboxChange[], options: { durable?: boolean } = {}): Promise<void> {
    if (changes.length === 0) {
      this.assertWritable();
      return;
    }
    this.mutate(() => {
      // Check every change before applying any: a batch is all or nothing.
      const stateOf = this.statement("SELECT state FROM outbox WHERE id = ?");
      checkOutboxChanges(changes, (id) => (stateOf.get(id) as { state: OutboxState } | undefined)?.state);
      for (const change of changes) {
        this.applyChange(change);
        // In the same transaction as the change: the history and the outbox agree after a crash.
        const attempt = attemptOfChange(change);
        if (attempt !== undefined) {
          this.statement(INSERT_ATTEMPT).run(attempt.at_ms, attempt.delivery_id, attempt.delivery_id, attempt.attempt, attempt.outcome, attempt.status, attempt.latency_ms, attempt.error, change.id);
        }
      }
    });
    if (options.durable === false) {
      this.groupCommit.defer();
      this.lazyTimer ??= setTimeout(() => {
        this.lazyTimer = undefined;
        // A failure is logged by commit() and reported by stats(); the changes were undone.
        this.flush().catch(() => undefined);
      }, LAZY_COMMIT_MS);
      return;
    }
    await this.groupCommit.request();
  }

  private applyChange(change: OutboxChange): void {
    switch (change.kind) {
      case "delivered": {
        const changed = this.statement("UPDATE outbox SET state = 'delivered', attempts = attempts + 1, delivered_at = ?, delivered_ms = ? WHERE id = ? AND state <> 'delivered'").run(
          change.at,
          msOf(change.at),
          change.id,
        ).changes;
        if (changed > 0 && change.suppressed !== undefined) {
          this.statement("INSERT INTO suppressed (entry_id, at, reason) VALUES (?, ?, ?) ON CONFLICT (entry_id) DO NOTHING").run(change.id, change.at, change.suppressed);
        }
        return;
      }
      case "failed":
        this.statement("UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, due_ms = ? WHERE id = ?").run(
          change.error,
          change.next_attempt_at,
          msOf(change.next_attempt_at),
          change.id,
        );
        return;
      case "dead":
        this.statement("UPDATE outbox SET state = 'dead', attempts = attempts + 1, dead_reason = ? WHERE id = ? AND state <> 'dead'").run(change.reason, change.id);
        return;
      case "defer":
        this.statement("UPDATE outbox SET next_attempt_at = ?, due_ms = ?, last_error = ? WHERE id = ?").run(change.until, msOf(change.until), change.note, change.id);
        return;
      case "requeue":
        // A fresh digest: reusing the old group id would make a receiver drop it as a duplicate.
        this.statement(
          "UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = ?, due_ms = ?, group_id = NULL, dead_reason = NULL WHERE id = ? AND state <> 'pending'",
        ).run(change.at, msOf(change.at), change.id);
        return;
      case "group":
        this.statement("UPDATE outbox SET group_id = ? WHERE id = ?").run(change.group_id, change.id);
        return;
    }
  }

  async pruneDelivered(olderThan: string, limit?: number): Promise<number> {
    const before = Date.parse(olderThan);
    if (Number.isNaN(before)) throw new TypeError(`olderThan is not an ISO-8601 date: ${olderThan}`);
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new TypeError(`limit must be a whole number ≥ 1, not ${limit}`);
    const removed = this.mutate(() => {
      // A suppression note lives as long as its entry, an alert as long as its last entry: triggers remove them (sqlite-schema.ts).
      return this.statement(
        // The hint: otherwise the planner sorts every delivered entry to find the oldest few.
        "DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox INDEXED BY outbox_delivered WHERE state = 'delivered' AND delivered_ms < ? ORDER BY delivered_ms LIMIT ?)",
      ).run(before, limit ?? -1).changes;
    });
    if (removed > 0) {
      this.outboxTotal = this.alertsTotal = undefined;
      await this.groupCommit.request();
    }
    return removed;
  }

  async listAttempts(filter: AttemptFilter = {}): Promise<DeliveryAttempt[]> {
    const { where, params, limit } = attemptQuery(filter, () => "?");
    // One alert's attempts are read by their own index; the rest walk the time index backwards.
    const hint = filter.alertId !== undefined ? " INDEXED BY delivery_attempts_by_alert" : "";
    const sql = `SELECT ${ATTEMPT_COLUMNS} FROM delivery_attempts${hint}${where} ORDER BY at_ms DESC, seq DESC${limit === undefined ? "" : " LIMIT ?"}`;
    return this.read(() => (this.statement(sql).all(...params, ...(limit === undefined ? [] : [limit])) as AttemptRow[]).map(attemptOfRow));
  }

  async pruneAttempts(olderThan: string, limit?: number): Promise<number> {
    const before = checkPrune(olderThan, limit);
    const removed = this.mutate(() =>
      this.statement("DELETE FROM delivery_attempts WHERE seq IN (SELECT seq FROM delivery_attempts INDEXED BY delivery_attempts_by_time WHERE at_ms < ? ORDER BY at_ms LIMIT ?)").run(before, limit ?? -1).changes,
    );
    if (removed > 0) await this.groupCommit.request();
    return removed;
  }

  async getMeta(key: string): Promise<unknown> {
    return this.meta.get(key);
  }

  /** Every meta key (for `kaiawatch store migrate`, which copies them all). */
  metaKeys(): string[] {
    return [...this.meta.keys()];
  }

  /** Every cooldown stamp, suppression note and silence (for `kaiawatch store migrate`). */
  rowsToMigrate(): { stamps: CooldownStamp[]; notes: Array<{ id: string } & SuppressedNote>; silences: StoredSilence[] } {
    const stamps = (this.statement("SELECT sink, rule, key, at_ms, entry_id FROM cooldowns").all() as StampRow[]).map(stampOfRow);
    const notes = this.statement("SELECT entry_id AS id, at, reason FROM suppressed").all() as Array<{ id: string } & SuppressedNote>;
    const silences = (this.statement(`SELECT ${SILENCE_COLUMNS} FROM silences WHERE removed_at IS NULL`).all() as SqliteSilenceRow[]).map(silenceOfSqliteRow);
    return { stamps, notes, silences };
  }

  async setMeta(key: string, value: unknown): Promise<void> {
    this.mutate(() => this.putMeta(key, value));
    await this.groupCommit.request();
  }

  /** Writes one meta row in the transaction of the moment; `undefined` removes it. */
  private putMeta(key: string, value: unknown): void {
    // A JSON copy: what is stored is exactly what a restart will read back.
    const text = JSON.stringify(value);
    if (text === undefined) {
      this.statement("DELETE FROM meta WHERE key = ?").run(key);
      this.meta.delete(key);
    } else {
      this.statement("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, text);
      this.meta.set(key, JSON.parse(text) as unknown);
    }
  }

  async readCooldowns(sink: string, keys: ReadonlyArray<{ rule: string; key: string }>): Promise<CooldownStamp[]> {
    return this.read(() => {
      const read = this.statement("SELECT sink, rule, key, at_ms, entry_id FROM cooldowns WHERE sink = ? AND rule = ? AND key = ?");
      const stamps: CooldownStamp[] = [];
      for (const { rule, key } of keys) {
        const row = read.get(sink, rule, key) as StampRow | undefined;
        if (row !== undefined) stamps.push(stampOfRow(row));
      }
      return stamps;
    });
  }

  async writeCooldowns(stamps: readonly CooldownStamp[]): Promise<void> {
    if (stamps.length === 0) return;
    await this.write(() => {
      // The condition keeps the later stamp: a stamp never goes back in time.
      const upsert = this.statement(
        "INSERT INTO cooldowns (sink, rule, key, at_ms, entry_id) VALUES (?, ?, ?, ?, ?) ON CONFLICT (sink, rule, key) DO UPDATE SET at_ms = excluded.at_ms, entry_id = excluded.entry_id WHERE cooldowns.at_ms <= excluded.at_ms",
      );
      for (const stamp of stamps) upsert.run(stamp.sink, stamp.rule, stamp.key, stamp.at, stamp.entryId ?? null);
    });
  }

  async pruneCooldowns(before: number): Promise<number> {
    const old = this.read(() => (this.statement("SELECT count(*) AS n FROM cooldowns WHERE at_ms < ?").get(before) as { n: number }).n);
    if (old === 0) return 0;
    return this.write(() => this.statement("DELETE FROM cooldowns WHERE at_ms < ?").run(before).changes);
  }

  async suppressions(entryIds: readonly string[]): Promise<Record<string, SuppressedNote>> {
    return this.read(() => {
      const read = this.statement("SELECT at, reason FROM suppressed WHERE entry_id = ?");
      const notes: Record<string, SuppressedNote> = {};
      for (const id of entryIds) {
        const note = read.get(id) as SuppressedNote | undefined;
        if (note !== undefined) notes[id] = { at: note.at, reason: note.reason };
      }
      return notes;
    });
  }

  async flush(): Promise<void> {
    if (this.readOnly) return;
    if (this.corruption !== undefined) throw this.corruption;
    await this.groupCommit.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      // A damaged store has nothing more to commit (its writes stopped and were reported).
      if (this.corruption === undefined) await this.flush();
    } finally {
      this.closed = true;
      clearTimeout(this.lazyTimer);
      try {
        await this.checkpointer?.close();
        if (this.corruption !== undefined) this.closeWithoutCheckpoint();
        // The last connection to close checkpoints the WAL into the database and removes it.
        else this.db.close();
      } finally {
        await this.lock?.release();
      }
    }
  }

  /**
   * Closes a damaged store leaving the WAL as it is: a reader holds its shared lock on the
   * database while the writer closes, so the writer is not the last connection and does not
   * checkpoint; a read-only connection never does.
   */
  private closeWithoutCheckpoint(): void {
    let reader: Database | undefined;
    try {
      reader = new BetterSqlite3(this.path, { readonly: true, fileMustExist: true });
      reader.pragma("schema_version");
    } catch {
      // The reader is a precaution; without it the close checkpoints as usual.
    }
    try {
      this.db.close();
    } finally {
      reader?.close();
    }
  }

  async stats(): Promise<StoreStats> {
    return this.statsNow();
  }

  writeFailing(): boolean {
    return this.lastWriteFailed || this.corruption !== undefined;
  }

  /** The stats from memory (and the outbox count, cached until the outbox changes). */
  statsNow(): StoreStats {
    return {
      writes: this.writes,
      failedWrites: this.failedWrites,
      lastWriteFailed: this.lastWriteFailed || this.corruption !== undefined,
      bytes: this.bytes,
      outbox: this.closed || this.corruption !== undefined ? (this.outboxTotal ?? 0) : (this.outboxTotal ??= this.countOutboxNow()),
      alerts: this.closed || this.corruption !== undefined ? (this.alertsTotal ?? 0) : (this.alertsTotal ??= (this.statement("SELECT n FROM alerts_held").get() as { n: number }).n),
      cursors: this.cursors.size,
      ...(this.corruption === undefined ? {} : { corrupt: this.corruption.message }),
    };
  }

  /** The group commit's write: ends the open transaction. Synchronous, like SQLite. */
  private commit(): Promise<void> {
    return this.writing(() => this.commitNow());
  }

  private commitNow(): Promise<void> {
    if (!this.db.inTransaction) {
      // Nothing to commit (the mutations of this batch were rolled back, or none was made).
      // A write that failed before leaves nothing to retry: it was undone. Try the disk.
      if (this.lastWriteFailed && !this.closed) return this.probe();
      return Promise.resolve();
    }
    return this.commitWrite(() => undefined);
  }

  /** After a failed write: a small real write tells whether the disk takes writes again. */
  private probe(): Promise<void> {
    return this.commitWrite(() => {
      this.db.exec("BEGIN IMMEDIATE");
      this.statement("INSERT INTO meta (key, value) VALUES ('store.last_probe', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
        JSON.stringify(new Date(this.common.now()).toISOString()),
      );
    });
  }

  /** `write`, then the store's identity and COMMIT, timed from before `write`; a failure is counted and said once, as the commits' are. */
  private commitWrite(write: () => void): Promise<void> {
    const started = performance.now();
    try {
      write();
      this.around.faults?.inCommit?.();
      this.touchIdentity();
      this.db.exec("COMMIT");
    } catch (error) {
      if (isCorruption(error)) return Promise.reject(this.damaged(error));
      this.writeFailed(error);
      return Promise.reject(this.writeError(error));
    }
    this.committed(started);
    return Promise.resolve();
  }

  private committed(started: number): void {
    this.writes++;
    this.lastWriteFailed = false;
    this.common.metrics.storeWriteDuration.observe((performance.now() - started) / 1000);
    this.measureBytes();
    this.common.metrics.storeSize.set(this.bytes);
    this.uncheckpointed++;
    if (this.finishCheckpoint) this.checkpoint("PASSIVE");
    // The thread has not kept up (it failed, or a starved machine gave it no time for 600
    // commits): the writer copies the WAL itself. Only when the thread holds the checkpoint
    // lock (PASSIVE busy) does it wait for it (FULL, up to busy_timeout), so that the WAL's
    // bound does not depend on the thread; a reader of an older snapshot is never waited for
    // at every commit, it only leaves the next commit to try again.
    else if (this.uncheckpointed >= 4 * CHECKPOINT_AFTER_COMMITS && this.checkpoint("PASSIVE") === "busy") this.checkpoint("FULL");
    else if (this.uncheckpointed >= CHECKPOINT_AFTER_COMMITS && !this.checkpointerFailed && this.files.length > 0) {
      // Started at the first checkpoint: a short-lived store (a CLI command, a test) never needs it.
      this.checkpointer ??= createCheckpointer(this.path, (outcome) => {
        if (outcome.ok) {
          // Commits that came while the thread copied are still only in the WAL, and SQLite
          // starts the WAL over only once every frame is copied: this thread copies those
          // few after the next commit (or now, between commits), so the WAL stays small.
          this.finishCheckpoint = true;
          if (!this.closed && !this.db.inTransaction) this.checkpoint("PASSIVE");
          return;
        }
        this.checkpointerFailed = true;
        this.logger.warn({ path: this.path, error: outcome.error }, "the store's checkpoint thread failed; checkpoints run after commits instead");
      });
      this.checkpointer.request();
    }
  }

  /**
   * A checkpoint on this thread: PASSIVE for the end of one the checkpoint thread did (the few
   * frames committed meanwhile), FULL for the fallback when the thread has not kept up.
   */
  private checkpoint(mode: "PASSIVE" | "FULL"): "done" | "busy" | "partial" | "skipped" {
    if (this.db.inTransaction || this.corruption !== undefined) return "skipped";
    try {
      // PASSIVE copies what no reader still needs and never waits. FULL waits, up to
      // busy_timeout, for the checkpoint lock (the thread's checkpoint) and for readers of
      // older snapshots. Either is done only when it was not busy and copied every frame:
      // until then the next commit tries again, or the WAL could grow past the bound while
      // the count said it had been copied.
      const [result] = this.writing(() => this.db.pragma(`wal_checkpoint(${mode})`)) as Array<{ busy: number; log: number; checkpointed: number }>;
      if (result !== undefined && result.busy !== 0) return "busy";
      if (result !== undefined && result.checkpointed < result.log) return "partial";
      this.uncheckpointed = 0;
      this.finishCheckpoint = false;
      return "done";
    } catch (error) {
      this.logger.warn({ path: this.path, err: error }, "store checkpoint failed; the next one tries again");
      return "skipped";
    }
  }

  /** A failed write: SQLite undid the transaction (or we do), and memory follows the database. */
  private writeFailed(error: unknown): void {
    this.failedWrites++;
    this.lastWriteFailed = true;
    try {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
    } catch {
      // SQLite may already have rolled it back.
    }
    this.loadCaches();
    this.outboxTotal = this.alertsTotal = undefined;
    const failure = this.writeError(error);
    // Every change of the transaction went with it, other callers' too: those waiting for the
    // next commit are told it failed (at a failed COMMIT they are the batch in flight, which
    // the group commit rejects itself, and none waits here).
    this.groupCommit.abort(failure);
    this.logger.warn({ path: this.path, err: failure }, "store write failed; its changes were undone, and the last commit is kept");
  }

  private writeError(error: unknown): StoreError {
    if (error instanceof StoreError) return error;
    return new StoreError("KW_STORE_WRITE_FAILED", `cannot write the store ${this.path}: ${(error as Error).message} (${String((error as { code?: unknown }).code)})`, {
      cause: error,
    });
  }

  private assertWritable(): void {
    if (this.corruption !== undefined) throw this.corruption;
    if (this.readOnly) throw new StoreError("KW_STORE_READ_ONLY", `the store ${this.path} was opened read-only`);
    if (this.closed) throw new StoreError("KW_STORE_CLOSED", `the store ${this.path} is closed`);
  }
}

interface StampRow {
  sink: string;
  rule: string;
  key: string;
  at_ms: number;
  entry_id: string | null;
}

function stampOfRow(row: StampRow): CooldownStamp {
  return { sink: row.sink, rule: row.rule, key: row.key, at: row.at_ms, ...(row.entry_id === null ? {} : { entryId: row.entry_id }) };
}

/**
 * The store's own copy of a cursor, without what a read fills in (followers), its properties
 * written in one literal: V8 keeps them inside the object then (a copy by rest spread grows a
 * second array for them), and the store holds one per watch. `text` may share repeated texts.
 */
function memoryCursor(cursor: Cursor, text: (value: string) => string = (value) => value): Cursor {
  const { key, watch, block } = cursor;
  const source = text(cursor.source);
  const description = text(cursor.description);
  const updated_at = text(cursor.updated_at);
  return cursor.follows === undefined ? { key, watch, source, description, block, updated_at } : { key, watch, source, description, block, updated_at, follows: text(cursor.follows) };
}

/**
 * Blocks are numbered from 0, and -1 is the cursor of a source that starts at block 0 (nothing
 * processed yet). Anything lower, or not a whole number, would fail every tick: refused.
 */
export function checkCursor(cursor: Cursor): void {
  if (typeof cursor.key !== "string" || cursor.key === "" || !isCursorBlock(cursor.block)) {
    throw new TypeError(`a cursor needs a key and a block that is a whole number ≥ -1: ${JSON.stringify({ key: cursor.key, block: cursor.block })}`);
  }
}

export function isCursorBlock(block: unknown): block is number {
  return Number.isSafeInteger(block) && (block as number) >= -1;
}
