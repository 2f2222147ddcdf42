import { performance } from "node:perf_hooks";
import pg from "pg";
import type { Common } from "../../common/common.js";

import { describeError } from "../../common/errors.js";
import { StoreError } from "../errors.js";
import { checkOutboxChanges } from "../outbox-transitions.js";
import { cursorDocument, entryParams, followersKey, followingRead, msOf } from "../sqlite-schema.js";
import { checkCursor } from "../sqlite-store.js";
import { ATTEMPT_COLUMNS, attemptOfChange, attemptOfRow, attemptQuery, checkPrune, type AttemptRow } from "../delivery-attempts.js";
import type { AbsenceState, AttemptFilter, BalanceEpisode, BalanceEpisodeChange, CooldownStamp, DeliveryAttempt, Cursor, MissedWitness, Store, OutboxChange, OutboxCount, OutboxCountFilter, OutboxFilter, StoreStats, SuppressedNote, Witness, WitnessRole } from "../types.js";
import { missedByRole, otherRole, WITNESS_COLUMNS, witnessOfRow, witnessParams, type WitnessRow } from "../witness-rows.js";
import { checkEpisodeChanges, episodeConflict } from "../balance-episodes.js";
import { leaseKeyOf, type LeaseResource } from "../resources.js";
import type { AlertDocument } from "../../model/alert-document.js";
import type { OutboxEntry, OutboxState } from "../../model/outbox-entry.js";
import { createLeases, type Leases } from "./leases.js";
import { migrate } from "./migrate.js";
import { silenceColumns, type SilenceStore, type StoredSilence } from "../silence-store.js";
import { createSilenceTable } from "./silence-table.js";
import { entryOfPgRow, OUTBOX_COLUMNS, type PgOutboxRow, type Queryable } from "./rows.js";

const STATES: ReadonlySet<OutboxState> = new Set(["pending", "delivered", "dead"]);

export interface PostgresStoreOptions {
  /** postgres://… (a secret: it may hold a password; never logged). */
  url: string;
  /** This replica's id, stable across its restarts if possible (the host name, a pod name). */
  replicaId: string;
  /** How long a lease on a source lasts unless renewed (default 10 s). */
  leaseMs?: number;
  readOnly?: boolean;
  /** With `readOnly`: the silences may still be written (`kaiawatch silence`). */
  silencesWritable?: boolean;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** Bounds on waiting for the server (config store.statement_timeout, lock_timeout, pool_timeout); DEFAULT_POSTGRES_TIMEOUTS by default. */
  timeouts?: Partial<PostgresTimeouts>;
}

/**
 * How long kaiawatch waits for PostgreSQL. Without them a session holding a lock kaiawatch
 * needs made every query wait, the pool filled with waiting queries, and the daemon hung
 * silently (its health endpoints too) for as long as the lock was held. With them a query
 * fails within its bound, is logged and retried, and reads say the store is not answering.
 */
export interface PostgresTimeouts {
  /** PostgreSQL's statement_timeout: the longest one statement may run. */
  statementMs: number;
  /** PostgreSQL's lock_timeout: the longest one statement waits for a lock another session holds. */
  lockMs: number;
  /** The longest a query waits for a connection of the pool (a free one, or a new one to connect). */
  acquireMs: number;
}

export const DEFAULT_POSTGRES_TIMEOUTS: PostgresTimeouts = { statementMs: 10_000, lockMs: 3_000, acquireMs: 5_000 };

/** The pool's error when no connection came within connectionTimeoutMillis (pg-pool and pg say it in these words). */
const ACQUIRE_TIMEOUT = /timeout exceeded when trying to connect|Connection terminated due to connection timeout/;

/**
 * What a timeout says, naming the config key that bounds it; undefined for any other error.
 * 57014 is query_canceled (statement_timeout), 55P03 lock_not_available (lock_timeout).
 */
export function describeTimeout(error: unknown, timeouts: PostgresTimeouts): string | undefined {
  const seconds = (ms: number) => `${ms / 1000} s`;
  if (error instanceof pg.DatabaseError && error.code === "57014") return `a statement ran past store.statement_timeout (${seconds(timeouts.statementMs)}): ${error.message}`;
  if (error instanceof pg.DatabaseError && error.code === "55P03") return `a lock another session holds was not granted within store.lock_timeout (${seconds(timeouts.lockMs)}): ${error.message}`;
  if (error instanceof Error && ACQUIRE_TIMEOUT.test(error.message)) return `no connection within store.pool_timeout (${seconds(timeouts.acquireMs)}): every connection of the pool is busy, or the server does not accept one`;
  return undefined;
}

/** The columns of an INSERT, in the order of entryParams (shared with the SQLite store, so both derive the same index times). */
const INSERT_COLUMNS = ["id", "alert_id", "sink", "rule", "state", "attempts", "created_at", "next_attempt_at", "due_ms", "group_id", "last_error", "dead_reason", "delivered_at", "delivered_ms"] as const;
/** PostgreSQL takes at most 65,535 parameters per statement: a large window goes in several statements of one transaction. */
const INSERT_CHUNK = 1000;
/**
 * Quiet windows' advances waiting for flush() (one transaction per firing of the engine); at
 * this many, the window that adds one writes them all at once, so that a long tick neither
 * holds an unbounded batch nor leaves most of its advances unwritten until it ends.
 */
const PENDING_LIMIT = 2000;

/** A quiet window's cursor advance not written yet, and the lease epoch that fences it. */
interface PendingAdvance {
  cursor: Cursor;
  epoch?: number;
}

/** The URL without credentials or query, for messages and `path`. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.hostname}${parsed.port === "" ? "" : `:${parsed.port}`}${parsed.pathname}`;
  } catch {
    return "postgres://(unreadable url)";
  }
}

/**
 * Opens the PostgreSQL store: connects, creates or migrates the schema (migrate.ts), and
 * returns the store. The URL is registered as a secret before anything can log.
 */
export async function createPostgresStore(common: Common, options: PostgresStoreOptions): Promise<PostgresStore> {
  common.secrets.add(options.url);
  try {
    const password = decodeURIComponent(new URL(options.url).password);
    if (password !== "") common.secrets.add(password);
  } catch {
    // pg reports an unreadable URL when it connects.
  }
  const timeouts = { ...DEFAULT_POSTGRES_TIMEOUTS, ...options.timeouts };
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    // Set by the server for every statement of these sessions (sent when they connect).
    statement_timeout: timeouts.statementMs,
    lock_timeout: timeouts.lockMs,
    connectionTimeoutMillis: timeouts.acquireMs,
  });
  const logger = common.logger.child({ component: "store", store: describeUrl(options.url), replica: options.replicaId });
  // An idle connection that the server drops (restart, outage) is reported here; without a
  // listener node-postgres would crash the process. The next query opens a new connection.
  pool.on("error", (error) => logger.warn({ err: describeError(error) }, "a PostgreSQL connection was lost; the next query reconnects"));
  try {
    if (options.readOnly !== true) {
      const client = await pool.connect();
      const lost = (): void => undefined; // as in transaction(): the failed query tells
      client.on("error", lost);
      try {
        await migrate(client, logger);
      } finally {
        client.off("error", lost);
        client.release();
      }
    } else {
      // A reader never creates the schema: an empty database is said to be one, not left to
      // fail later with a raw "relation does not exist".
      const found = (await pool.query<{ cursors: string | null }>("SELECT to_regclass('cursors')::text AS cursors")).rows[0];
      if (found?.cursors === null || found === undefined) {
        throw new StoreError("KW_STORE_VERSION", `the PostgreSQL database ${describeUrl(options.url)} holds no kaiawatch store yet (a daemon creates it at its first start, or \`kaiawatch store migrate\` does)`);
      }
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (error instanceof StoreError) throw error;
    const timeout = describeTimeout(error, timeouts);
    if (timeout !== undefined) {
      const step = options.readOnly === true ? "reading its schema version" : "creating or migrating its schema (kaiawatch_schema)";
      throw new StoreError(
        "KW_STORE_TIMEOUT",
        `the PostgreSQL store ${describeUrl(options.url)} did not answer while ${step}: ${timeout}. Another session may hold a lock on kaiawatch's tables (see pg_locks and pg_stat_activity), or a statement_timeout set for the role or database is shorter than the step needs; raise the store.* timeout named here, or end that session`,
        { cause: error },
      );
    }
    throw unreachable(options.url, error);
  }
  return new PostgresStore(common, pool, { ...options, timeouts });
}

function unreachable(url: string, error: unknown): StoreError {
  return new StoreError("KW_STORE_UNREACHABLE", `cannot reach the PostgreSQL store ${describeUrl(url)}: ${(error as Error).message}`, { cause: error });
}

/**
 * The store in PostgreSQL, shared by several replicas. Nothing is cached: another replica may
 * change any row at any time, so every read asks the server. Every mutation is one
 * transaction, committed before its promise resolves; the changes that a crash may lose at
 * no cost (a quiet window's cursor, a delivery's outcome with `durable: false`) commit with
 * `synchronous_commit = off`, which skips the wait for the WAL flush but keeps them atomic.
 */
export class PostgresStore implements Store {
  readonly path: string;
  readonly readOnly: boolean;
  readonly replicaId: string;
  /** The leases of sources for this replica (leases.ts). */
  readonly leases: Leases;
  /** The silences, shared by every replica and the CLI (silence-table.ts). */
  readonly silences: SilenceStore;
  private closed = false;
  private writes = 0;
  private failedWrites = 0;
  private lastWriteFailed = false;
  private lastCounts = { bytes: 0, outbox: 0, alerts: 0, cursors: 0 };
  /** This replica's deferred advances by source key (commitWindow without entries); flush() writes them. */
  private readonly pending = new Map<string, PendingAdvance>();
  /** The cursor reads gathered for one query (getCursor). */
  private cursorReads: { keys: Set<string>; rows: Promise<Map<string, { cursor: Cursor; followed: Cursor | undefined }>> } | undefined;
  private readonly timeouts: PostgresTimeouts;
  /** The flush in progress: flushes run one after the other, so one that returns has written what came before it. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly common: Common,
    private readonly pool: pg.Pool,
    private readonly options: PostgresStoreOptions,
  ) {
    this.path = describeUrl(options.url);
    this.timeouts = { ...DEFAULT_POSTGRES_TIMEOUTS, ...options.timeouts };
    this.readOnly = options.readOnly === true;
    this.replicaId = options.replicaId;
    this.leases = createLeases(common, { db: pool, replicaId: options.replicaId, leaseMs: options.leaseMs ?? 10_000 });
    this.silences = createSilenceTable({ read: (sql, params) => this.read(sql, params), write: (fn) => this.transaction(fn, { silences: true }) });
  }

  /** A read; a server that does not answer is KW_STORE_UNREACHABLE, one that does not answer in time KW_STORE_TIMEOUT. */
  private async read<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    if (this.closed) throw new StoreError("KW_STORE_CLOSED", `the store ${this.path} is closed`);
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (error) {
      const timeout = describeTimeout(error, this.timeouts);
      if (timeout !== undefined) throw new StoreError("KW_STORE_TIMEOUT", `the PostgreSQL store ${this.path} did not answer a read: ${timeout}`, { cause: error });
      if (isServerAnswer(error)) throw error;
      throw unreachable(this.options.url, error);
    }
  }

  /**
   * Runs `fn` in one transaction. A StoreError that `fn` throws (a refused change) rolls it
   * back and is rethrown as it is; any other failure is a failed write (KW_STORE_WRITE_FAILED).
   */
  private async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, options: { durable?: boolean; silences?: boolean } = {}): Promise<T> {
    if (options.silences === true && this.options.silencesWritable === true) this.assertOpen();
    else this.assertWritable();
    const started = performance.now();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.writeFailed(error);
    }
    // A checked-out connection has no listener of the pool's: when the server goes away in the
    // middle of a transaction (an outage) node-postgres emits "error" on it, and unheard that
    // ended the process. The query in flight fails as well, and that failure is what counts.
    const lost = (): void => undefined;
    client.on("error", lost);
    let broken = false;
    try {
      await client.query("BEGIN");
      if (options.durable === false) await client.query("SET LOCAL synchronous_commit = off");
      const result = await fn(client);
      await client.query("COMMIT");
      this.writes++;
      this.lastWriteFailed = false;
      this.common.metrics.storeWriteDuration.observe((performance.now() - started) / 1000);
      return result;
    } catch (error) {
      try {
        await client.query("ROLLBACK");
      } catch {
        broken = true;
      }
      if (error instanceof StoreError) throw error;
      throw this.writeFailed(error);
    } finally {
      client.off("error", lost);
      // A connection whose ROLLBACK failed is in an unknown state: dropped, not reused.
      client.release(broken);
    }
  }

  private writeFailed(error: unknown): StoreError {
    this.failedWrites++;
    this.lastWriteFailed = true;
    const failure = new StoreError("KW_STORE_WRITE_FAILED", `cannot write the PostgreSQL store ${this.path}: ${describeTimeout(error, this.timeouts) ?? (error as Error).message}`, { cause: error });
    this.common.logger.warn({ store: this.path, err: describeError(failure) }, "store write failed; its changes were rolled back");
    return failure;
  }

  private assertWritable(): void {
    if (this.readOnly) throw new StoreError("KW_STORE_READ_ONLY", `the store ${this.path} was opened read-only`);
    this.assertOpen();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError("KW_STORE_CLOSED", `the store ${this.path} is closed`);
  }

  /**
   * The stored cursor, or this replica's advance of it that is not written yet (the later of
   * the two). Read afresh each time; the reads asked for in the same turn of the event loop
   * (the many ticks of a firing starting together) share one query.
   */
  async getCursor(key: string): Promise<Cursor | undefined> {
    let batch = this.cursorReads;
    if (batch === undefined) {
      const keys = new Set<string>();
      const rows = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        // Later reads start a batch of their own: this one's query may already be on its way.
        this.cursorReads = undefined;
        // A follower with the cursor it follows (Cursor.follows), in the same query.
        const found = await this.read<{ key: string; cursor: Cursor; followed: Cursor | null; followers: number | null }>(
          `SELECT c.key, c.cursor, f.cursor AS followed, m.value AS followers FROM cursors c
           LEFT JOIN cursors f ON f.key = c.cursor->>'follows' LEFT JOIN meta m ON m.key = $2 || c.key WHERE c.key = ANY($1)`,
          [[...keys], FOLLOWERS_PREFIX],
        );
        return new Map(found.map((row) => [row.key, { cursor: withFollowers(row.cursor, row.followers), followed: row.followed ?? undefined }]));
      });
      batch = { keys, rows };
      this.cursorReads = batch;
    }
    batch.keys.add(key);
    const stored = (await batch.rows).get(key);
    if (stored === undefined) return this.laterOf(undefined, key);
    return this.readAs(this.laterOf(structuredClone(stored.cursor), key)!, stored.followed);
  }

  async listCursors(): Promise<Cursor[]> {
    const stored = (await this.read<{ cursor: Cursor; followers: number | null }>('SELECT c.cursor, m.value AS followers FROM cursors c LEFT JOIN meta m ON m.key = $1 || c.key ORDER BY c.key COLLATE "C"', [FOLLOWERS_PREFIX])).map((row) =>
      withFollowers(row.cursor, row.followers),
    );
    const keys = new Set(stored.map((cursor) => cursor.key));
    const merged = stored.map((cursor) => this.laterOf(cursor, cursor.key)!);
    for (const [key, advance] of this.pending) if (!keys.has(key)) merged.push(advance.cursor);
    const byKey = new Map(merged.map((cursor) => [cursor.key, cursor]));
    return merged.map((cursor) => this.readAs(cursor, cursor.follows === undefined ? undefined : byKey.get(cursor.follows))).sort((a, b) => compare(a.key, b.key));
  }

  private laterOf(stored: Cursor | undefined, key: string): Cursor | undefined {
    const advance = this.pending.get(key)?.cursor;
    return advance !== undefined && (stored === undefined || advance.block > stored.block) ? { ...advance } : stored;
  }

  /** A follower as it reads (followingRead), its source as stored or as deferred here, the later. */
  private readAs(cursor: Cursor, followedStored: Cursor | undefined): Cursor {
    if (cursor.follows === undefined) return cursor;
    return followingRead(cursor, this.laterOf(followedStored, cursor.follows));
  }

  async setCursor(cursor: Cursor): Promise<void> {
    checkCursor(cursor);
    await this.transaction(async (client) => {
      await bumpFollowersOf(client, [cursor.key], cursor.follows);
      await upsertCursor(client, cursor);
    });
    // An advance deferred before the move must not undo it (a rewind) when flushed.
    this.pending.delete(cursor.key);
  }

  async followCursor(input: { source: string; followers: readonly Cursor[] }): Promise<{ generation: number }> {
    const { source, followers } = input;
    for (const follower of followers) checkCursor(follower);
    // The source's deferred advance first: a cursor that stops following it stops at the block it read as here.
    await this.flush();
    const keys = followers.map((f) => f.key);
    const generation = await this.transaction(async (client) => {
      // Those left out stop following, as they read (followingRead): at the source's block and time where it is ahead.
      const at = (await client.query<{ block: string; updated_at: string }>("SELECT block, cursor->>'updated_at' AS updated_at FROM cursors WHERE key = $1", [source])).rows[0];
      if (at !== undefined) {
        await client.query(
          `UPDATE cursors SET block = $3, cursor = (cursor - 'follows') || jsonb_build_object('block', $3::bigint, 'updated_at', $4::text)
           WHERE cursor->>'follows' = $1 AND NOT (key = ANY($2::text[])) AND block < $3`,
          [source, keys, Number(at.block), at.updated_at],
        );
      }
      await client.query("UPDATE cursors SET cursor = cursor - 'follows' WHERE cursor->>'follows' = $1 AND NOT (key = ANY($2::text[]))", [source, keys]);
      await bumpFollowersOf(client, keys, source);
      for (let i = 0; i < followers.length; i += FOLLOWERS_PER_STATEMENT) {
        const part = followers.slice(i, i + FOLLOWERS_PER_STATEMENT).map((f) => ({ ...f, follows: source }));
        await client.query(
          `INSERT INTO cursors (key, block, cursor) SELECT * FROM unnest($1::text[], $2::bigint[], $3::jsonb[])
           ON CONFLICT (key) DO UPDATE SET block = excluded.block, cursor = excluded.cursor`,
          [part.map((c) => c.key), part.map((c) => c.block), part.map((c) => cursorDocument(c))],
        );
      }
      return bumpFollowers(client, source);
    });
    return { generation };
  }


  /**
   * `kaiawatch cursors --set` beside running replicas: sets the cursor and fences the
   * source's holder in one transaction. The lease's epoch goes up by one, so a window the
   * holder is committing from the old position is refused (KW_STORE_LEASE_LOST) instead of
   * undoing the move (moving the cursor past a rewind, or back before a skip); the holder
   * keeps the lease, learns the new epoch at its next renewal and reads the cursor afresh at
   * its next tick. Returns the block before.
   */
  async moveCursor(cursor: Cursor): Promise<{ before?: number }> {
    checkCursor(cursor);
    const moved = await this.transaction(async (client) => {
      // The lease row first, as a commit locks it: a commit in flight finishes before, or is refused after.
      await client.query("UPDATE leases SET epoch = epoch + 1 WHERE key = $1 AND owner IS NOT NULL", [cursor.key]);
      const before = (await client.query<{ block: string }>("SELECT GREATEST(c.block, COALESCE(f.block, -1)) AS block FROM cursors c LEFT JOIN cursors f ON f.key = c.cursor->>'follows' WHERE c.key = $1 FOR UPDATE OF c", [cursor.key])).rows[0];
      await bumpFollowersOf(client, [cursor.key], cursor.follows);
      await upsertCursor(client, cursor);
      return before === undefined ? {} : { before: Number(before.block) };
    });
    this.pending.delete(cursor.key);
    return moved;
  }

  /**
   * The atomic step of guarantee 1 (see Store.commitWindow). With `epoch`, the write is fenced:
   * it commits only while this replica holds the source's lease at that epoch, and is refused
   * with KW_STORE_LEASE_LOST otherwise, so a replica that paused past its lease and lost the
   * source to another cannot move the cursor any more.
   */
  async commitWindow(input: { cursor: Cursor; entries: OutboxEntry[]; epoch?: number; absences?: readonly AbsenceState[]; witnesses?: readonly Witness[] }): Promise<{ added: number }> {
    const { cursor, entries, epoch, absences = [], witnesses = [] } = input;
    checkCursor(cursor);
    // Absence states and witnesses are written at once, with their cursor: a deferred advance holds a cursor only.
    if (entries.length === 0 && absences.length === 0 && witnesses.length === 0) {
      // A window without alerts owes no delivery: its advance waits for flush(), which writes
      // every such advance of the firing in one transaction, each still fenced by its epoch.
      // Losing it (a crash) re-scans blocks that held no alert; it is never ahead of alerts,
      // as a window with alerts commits at once, with its own cursor.
      this.assertWritable();
      this.checkNotBehindPending(cursor);
      this.pending.set(cursor.key, epoch === undefined ? { cursor } : { cursor, epoch });
      if (this.pending.size >= PENDING_LIMIT) await this.flush();
      return { added: 0 };
    }
    this.checkNotBehindPending(cursor);
    const bySink = await this.transaction(
      async (client) => {
        // The lease row first, locked: a takeover (which updates it) waits for this commit,
        // or this commit sees the new epoch. The same order everywhere: no deadlock.
        if (epoch !== undefined) await this.checkLease(client, cursor.key, epoch);
        // The check and the write in one statement: two commits of a new source racing each
        // other cannot both pass a check made before either wrote.
        const advanced = await client.query(
          `INSERT INTO cursors (key, block, cursor) VALUES ($1, $2, $3::jsonb)
           ON CONFLICT (key) DO UPDATE SET block = excluded.block, cursor = excluded.cursor WHERE cursors.block <= excluded.block`,
          [cursor.key, cursor.block, cursorDocument(cursor)],
        );
        if (advanced.rowCount === 0) {
          const current = (await client.query<{ block: string }>("SELECT block FROM cursors WHERE key = $1", [cursor.key])).rows[0];
          throw new StoreError(
            "KW_STORE_CURSOR_BACKWARDS",
            `the cursor of ${cursor.key} is at block ${current?.block ?? "?"}; a window cannot move it back to ${cursor.block} (use setCursor to rewind)`,
          );
        }
        for (const absence of absences) {
          await client.query("INSERT INTO absences (rule, state) VALUES ($1, $2::jsonb) ON CONFLICT (rule) DO UPDATE SET state = excluded.state", [absence.rule, JSON.stringify(absence)]);
        }
        for (const witness of witnesses) {
          // Seen by the other reader already: its open row goes (a missed one stays, the record
          // of its report), and this one is not kept. The NOT EXISTS reads the rows as they were
          // before the DELETE (one statement, one snapshot).
          await client.query(
            `WITH paired AS (DELETE FROM witnesses WHERE alert_id = $1 AND role = $12 AND missed_at IS NULL RETURNING 1)
             INSERT INTO witnesses (${WITNESS_COLUMNS}) SELECT $1, $2, $3, $4, $5, $6::bigint, $7, $8, $9, $10, $11
             WHERE NOT EXISTS (SELECT 1 FROM witnesses WHERE alert_id = $1 AND role = $12) ON CONFLICT (alert_id, role) DO NOTHING`,
            [...witnessParams(witness), otherRole(witness.role)],
          );
        }
        return insertNew(client, entries);
      },
    );
    // Written past any deferred advance of the source: nothing left to write.
    const waiting = this.pending.get(cursor.key);
    if (waiting !== undefined && waiting.cursor.block <= cursor.block) this.pending.delete(cursor.key);
    return { added: this.countQueued(bySink) };
  }

  /** The stored cursor may be behind this replica's deferred advance: a window is not behind that either. */
  private checkNotBehindPending(cursor: Cursor): void {
    const waiting = this.pending.get(cursor.key);
    if (waiting !== undefined && waiting.cursor.block > cursor.block) {
      throw new StoreError("KW_STORE_CURSOR_BACKWARDS", `the cursor of ${cursor.key} is at block ${waiting.cursor.block}; a window cannot move it back to ${cursor.block} (use setCursor to rewind)`);
    }
  }

  private async checkLease(client: pg.PoolClient, key: string, epoch: number): Promise<void> {
    const lease = (await client.query<{ owner: string | null; epoch: string }>("SELECT owner, epoch FROM leases WHERE key = $1 FOR UPDATE", [key])).rows[0];
    if (lease === undefined || lease.owner !== this.replicaId || Number(lease.epoch) !== epoch) {
      const holder = lease === undefined ? "no lease exists" : lease.owner === null ? `the lease is free at epoch ${lease.epoch}` : `the lease is at epoch ${lease.epoch}`;
      throw new StoreError("KW_STORE_LEASE_LOST", `replica ${this.replicaId} no longer holds the lease of ${key} at epoch ${epoch} (${holder}); its window was not committed`);
    }
  }

  async listAbsences(rules?: readonly string[]): Promise<AbsenceState[]> {
    const rows =
      rules === undefined
        ? await this.read<{ state: AbsenceState }>('SELECT state FROM absences ORDER BY rule COLLATE "C"')
        : await this.read<{ state: AbsenceState }>('SELECT state FROM absences WHERE rule = ANY($1::text[]) ORDER BY rule COLLATE "C"', [[...rules]]);
    return rows.map((row) => row.state);
  }

  async listBalanceEpisodes(): Promise<BalanceEpisode[]> {
    const rows = await this.read<{ rule: string; address: string; asset: string; alert: AlertDocument; clear: number; repeats: number; reminded_at: string | null }>(
      'SELECT rule, address, asset, alert, clear, repeats, reminded_at FROM balance_episodes ORDER BY rule COLLATE "C", address COLLATE "C", asset COLLATE "C"',
    );
    return rows.map((row) => ({ rule: row.rule, address: row.address, asset: row.asset, alert: row.alert, clear: Number(row.clear), repeats: Number(row.repeats), reminded_at: row.reminded_at }));
  }

  /**
   * See Store.commitBalanceEpisodes. Each change is one conditional statement (an insert that
   * does nothing where an episode is open, an update or delete of the expected episode only),
   * so two writers racing cannot both pass a check made before either wrote: the second's
   * statement changes no row, and its whole write is refused.
   */
  async commitBalanceEpisodes(input: { changes: readonly BalanceEpisodeChange[]; entries: OutboxEntry[]; lease?: { resource: LeaseResource; epoch: number } }): Promise<{ added: number }> {
    checkEpisodeChanges(input.changes);
    if (input.changes.length === 0 && input.entries.length === 0) {
      this.assertWritable();
      return { added: 0 };
    }
    const bySink = await this.transaction(async (client) => {
      if (input.lease !== undefined) await this.checkLease(client, leaseKeyOf(input.lease.resource), input.lease.epoch);
      for (const change of input.changes) {
        const where = [change.rule, change.address, change.asset];
        let result: pg.QueryResult;
        if (change.expect === null && change.next !== null) {
          result = await client.query("INSERT INTO balance_episodes (rule, address, asset, alert, clear, repeats, reminded_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7) ON CONFLICT DO NOTHING", [...where, JSON.stringify(change.next.alert), change.next.clear, change.next.repeats, change.next.reminded_at]);
        } else if (change.expect === null) {
          result = await client.query("SELECT 1 FROM balance_episodes WHERE rule = $1 AND address = $2 AND asset = $3", where);
          result = { ...result, rowCount: result.rowCount === 0 ? 1 : 0 };
        } else if (change.next === null) {
          result = await client.query("DELETE FROM balance_episodes WHERE rule = $1 AND address = $2 AND asset = $3 AND alert->>'id' = $4", [...where, change.expect]);
        } else {
          result = await client.query("UPDATE balance_episodes SET alert = $5::jsonb, clear = $6, repeats = $7, reminded_at = $8 WHERE rule = $1 AND address = $2 AND asset = $3 AND alert->>'id' = $4", [
            ...where,
            change.expect,
            JSON.stringify(change.next.alert),
            change.next.clear,
            change.next.repeats,
            change.next.reminded_at,
          ]);
        }
        if (result.rowCount === 0) {
          const stored = (await client.query<{ id: string }>("SELECT alert->>'id' AS id FROM balance_episodes WHERE rule = $1 AND address = $2 AND asset = $3", where)).rows[0]?.id ?? null;
          throw episodeConflict(change, stored);
        }
      }
      return insertNew(client, input.entries);
    });
    return { added: this.countQueued(bySink) };
  }

  async listWitnesses(filter: { missed: boolean; limit?: number }): Promise<Witness[]> {
    const sql = filter.missed
      ? `SELECT ${WITNESS_COLUMNS} FROM witnesses WHERE missed_at IS NOT NULL ORDER BY missed_at DESC, alert_id COLLATE "C", role LIMIT $1`
      : `SELECT ${WITNESS_COLUMNS} FROM witnesses WHERE missed_at IS NULL ORDER BY block, alert_id COLLATE "C", role LIMIT $1`;
    return (await this.read<WitnessRow>(sql, [filter.limit ?? null])).map(witnessOfRow);
  }

  async countWitnesses(): Promise<{ open: number; missed: Record<WitnessRole, number> }> {
    const rows = await this.read<{ role: string; missed: boolean; n: string }>("SELECT role, missed_at IS NOT NULL AS missed, count(*) AS n FROM witnesses GROUP BY role, missed_at IS NOT NULL");
    return { open: rows.filter((row) => !row.missed).reduce((sum, row) => sum + Number(row.n), 0), missed: missedByRole(rows.filter((row) => row.missed)) };
  }

  async settleWitnesses(input: { missed: readonly MissedWitness[]; at: string }): Promise<{ marked: Array<Pick<Witness, "alert_id" | "role">>; added: number }> {
    if (input.missed.length === 0) {
      this.assertWritable();
      return { marked: [], added: 0 };
    }
    const { marked, bySink } = await this.transaction(async (client) => {
      const marked: Array<Pick<Witness, "alert_id" | "role">> = [];
      const bySink = new Map<string, number>();
      for (const { alert_id, role, entries } of input.missed) {
        // Both readers committed it at once (on two replicas), neither seeing the other's row: a pair after all.
        const partner = await client.query("SELECT 1 FROM witnesses WHERE alert_id = $1 AND role = $2", [alert_id, otherRole(role)]);
        if ((partner.rowCount ?? 0) > 0) {
          await client.query("DELETE FROM witnesses WHERE alert_id = $1 AND missed_at IS NULL", [alert_id]);
          continue;
        }
        // Row-locked: a replica settling the same witness at once waits, then finds it marked.
        const updated = await client.query("UPDATE witnesses SET missed_at = $1 WHERE alert_id = $2 AND role = $3 AND missed_at IS NULL", [input.at, alert_id, role]);
        if ((updated.rowCount ?? 0) === 0) continue;
        marked.push({ alert_id, role });
        for (const [sink, n] of await insertNew(client, entries)) bySink.set(sink, (bySink.get(sink) ?? 0) + n);
      }
      return { marked, bySink };
    });
    return { marked, added: this.countQueued(bySink) };
  }

  async pruneWitnesses(olderThan: string, limit?: number): Promise<number> {
    checkPrune(olderThan, limit);
    return this.transaction(
      async (client) =>
        (await client.query("DELETE FROM witnesses WHERE (alert_id, role) IN (SELECT alert_id, role FROM witnesses WHERE missed_at IS NOT NULL AND missed_at < $1 ORDER BY missed_at LIMIT $2)", [olderThan, limit ?? null])).rowCount ?? 0,
    );
  }

  async enqueue(entries: OutboxEntry[]): Promise<{ added: number }> {
    if (entries.length === 0) {
      this.assertWritable();
      return { added: 0 };
    }
    const bySink = await this.transaction((client) => insertNew(client, entries));
    return { added: this.countQueued(bySink) };
  }

  /** Counts the added entries in the metrics, once committed; returns how many. */
  private countQueued(bySink: Map<string, number>): number {
    let added = 0;
    for (const [sink, n] of bySink) {
      this.common.metrics.alertsQueued.inc({ sink }, n);
      added += n;
    }
    return added;
  }

  async listOutbox(filter: OutboxFilter = {}): Promise<OutboxEntry[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.state !== undefined) {
      if (!STATES.has(filter.state)) throw new TypeError(`not an outbox state: ${String(filter.state)}`);
      // A literal, not a parameter: the planner then sees the partial indexes' condition.
      where.push(`state = '${filter.state}'`);
    }
    if (filter.sink !== undefined) {
      params.push(filter.sink);
      where.push(`sink = $${params.length}`);
    }
    if (filter.dueBefore !== undefined) {
      const due = Date.parse(filter.dueBefore);
      if (Number.isNaN(due)) throw new TypeError(`dueBefore is not an ISO-8601 date: ${filter.dueBefore}`);
      params.push(due);
      where.push(`due_ms <= $${params.length}`);
    }
    if (filter.groupId !== undefined) {
      params.push(filter.groupId);
      where.push(`group_id = $${params.length}`);
    }
    let sql = `SELECT ${OUTBOX_COLUMNS} FROM outbox JOIN alerts ON alerts.id = outbox.alert_id${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY seq ${filter.newestFirst === true ? "DESC" : "ASC"}`;
    if (filter.limit !== undefined) {
      if (!Number.isSafeInteger(filter.limit) || filter.limit < 0) throw new TypeError(`limit must be a whole number ≥ 0, not ${filter.limit}`);
      params.push(filter.limit);
      sql += ` LIMIT $${params.length}`;
    }
    return (await this.read<PgOutboxRow>(sql, params)).map(entryOfPgRow);
  }

  async countOutbox(filter: OutboxCountFilter = {}): Promise<number> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.sink !== undefined) {
      params.push(filter.sink);
      where.push(`sink = $${params.length}`);
    }
    if (filter.state !== undefined) {
      params.push(filter.state);
      where.push(`state = $${params.length}`);
    }
    if (filter.retrying !== undefined) {
      params.push(filter.retrying);
      where.push(`(attempts > 0) = $${params.length}`);
    }
    const rows = await this.read<{ n: number }>(`SELECT count(*)::int AS n FROM outbox${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""}`, params);
    return rows[0]?.n ?? 0;
  }

  async outboxCounts(): Promise<OutboxCount[]> {
    return this.read<OutboxCount>(
      `SELECT sink, state, count(*)::int AS count, (count(*) FILTER (WHERE attempts > 0))::int AS retrying
       FROM outbox GROUP BY sink, state ORDER BY sink COLLATE "C", state COLLATE "C"`,
    );
  }

  async nextAttemptAfter(sink: string, after: string): Promise<string | undefined> {
    const ms = Date.parse(after);
    if (Number.isNaN(ms)) throw new TypeError(`after is not an ISO-8601 date: ${after}`);
    const rows = await this.read<{ next_attempt_at: string }>(
      "SELECT next_attempt_at FROM outbox WHERE state = 'pending' AND sink = $1 AND due_ms > $2 ORDER BY due_ms LIMIT 1",
      [sink, ms],
    );
    return rows[0]?.next_attempt_at;
  }

  async updateOutbox(changes: OutboxChange[], options: { durable?: boolean } = {}): Promise<void> {
    if (changes.length === 0) {
      this.assertWritable();
      return;
    }
    await this.transaction(async (client) => {
      // Locked in id order, as every batch locks them: two replicas' batches never deadlock.
      const ids = [...new Set(changes.map((change) => change.id))].sort();
      const rows = (await client.query<{ id: string; state: OutboxState }>("SELECT id, state FROM outbox WHERE id = ANY($1) ORDER BY id FOR UPDATE", [ids])).rows;
      const states = new Map(rows.map((row) => [row.id, row.state]));
      checkOutboxChanges(changes, (id) => states.get(id));
      for (const change of changes) await applyChange(client, change);
      await insertAttempts(client, changes);
    }, options);
  }

  async pruneDelivered(olderThan: string, limit?: number): Promise<number> {
    const before = Date.parse(olderThan);
    if (Number.isNaN(before)) throw new TypeError(`olderThan is not an ISO-8601 date: ${olderThan}`);
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new TypeError(`limit must be a whole number ≥ 1, not ${limit}`);
    return this.transaction(async (client) => {
      const gone = await client.query<{ alert_id: string }>(
        // LIMIT NULL is no limit.
        "DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE state = 'delivered' AND delivered_ms < $1 ORDER BY delivered_ms LIMIT $2) RETURNING alert_id",
        [before, limit ?? null],
      );
      // The alerts whose last delivery went (a second statement: one statement's parts all see the outbox as it was before it).
      const alerts = [...new Set(gone.rows.map((row) => row.alert_id))];
      if (alerts.length > 0) await client.query("DELETE FROM alerts WHERE id = ANY($1) AND NOT EXISTS (SELECT 1 FROM outbox WHERE outbox.alert_id = alerts.id)", [alerts]);
      return gone.rowCount ?? 0;
    });
  }

  async listAttempts(filter: AttemptFilter = {}): Promise<DeliveryAttempt[]> {
    const { where, params, limit } = attemptQuery(filter, (n) => `$${n}`);
    const sql = `SELECT ${ATTEMPT_COLUMNS} FROM delivery_attempts${where} ORDER BY at_ms DESC, seq DESC${limit === undefined ? "" : ` LIMIT $${params.length + 1}`}`;
    return (await this.read<AttemptRow>(sql, limit === undefined ? params : [...params, limit])).map(attemptOfRow);
  }

  async pruneAttempts(olderThan: string, limit?: number): Promise<number> {
    const before = checkPrune(olderThan, limit);
    return this.transaction(
      async (client) =>
        // LIMIT NULL is no limit.
        (await client.query("DELETE FROM delivery_attempts WHERE seq IN (SELECT seq FROM delivery_attempts WHERE at_ms < $1 ORDER BY at_ms LIMIT $2)", [before, limit ?? null])).rowCount ?? 0,
    );
  }

  async getMeta(key: string): Promise<unknown> {
    const rows = await this.read<{ value: unknown }>("SELECT value FROM meta WHERE key = $1", [key]);
    return rows[0]?.value;
  }

  async setMeta(key: string, value: unknown): Promise<void> {
    const text = JSON.stringify(value);
    await this.transaction(async (client) => {
      if (text === undefined) await client.query("DELETE FROM meta WHERE key = $1", [key]);
      else await client.query("INSERT INTO meta (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [key, text]);
    });
  }

  async readCooldowns(sink: string, keys: ReadonlyArray<{ rule: string; key: string }>): Promise<CooldownStamp[]> {
    if (keys.length === 0) return [];
    const rows = await this.read<{ rule: string; key: string; at_ms: string; entry_id: string | null }>(
      "SELECT c.rule, c.key, c.at_ms, c.entry_id FROM cooldowns c JOIN unnest($2::text[], $3::text[]) AS k(rule, key) ON c.rule = k.rule AND c.key = k.key WHERE c.sink = $1",
      [sink, keys.map((k) => k.rule), keys.map((k) => k.key)],
    );
    return rows.map((row) => ({ sink, rule: row.rule, key: row.key, at: Number(row.at_ms), ...(row.entry_id === null ? {} : { entryId: row.entry_id }) }));
  }

  /**
   * One upsert per stamp, whose condition keeps the later stamp: replicas writing stamps at
   * once (of different sinks, or of one sink across a handover) lose none, and no stamp goes
   * back in time. Written in key order: two writers' row locks never deadlock.
   */
  async writeCooldowns(stamps: readonly CooldownStamp[]): Promise<void> {
    if (stamps.length === 0) {
      this.assertWritable();
      return;
    }
    const sorted = [...stamps].sort((a, b) => compare(a.sink, b.sink) || compare(a.rule, b.rule) || compare(a.key, b.key));
    await this.transaction(async (client) => {
      for (const stamp of sorted) {
        await client.query(
          `INSERT INTO cooldowns (sink, rule, key, at_ms, entry_id) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (sink, rule, key) DO UPDATE SET at_ms = excluded.at_ms, entry_id = excluded.entry_id WHERE cooldowns.at_ms <= excluded.at_ms`,
          [stamp.sink, stamp.rule, stamp.key, stamp.at, stamp.entryId ?? null],
        );
      }
    });
  }

  async pruneCooldowns(before: number): Promise<number> {
    return this.transaction(async (client) => (await client.query("DELETE FROM cooldowns WHERE at_ms < $1", [before])).rowCount ?? 0);
  }

  async suppressions(entryIds: readonly string[]): Promise<Record<string, SuppressedNote>> {
    if (entryIds.length === 0) return {};
    const rows = await this.read<{ entry_id: string; at: string; reason: SuppressedNote["reason"] }>("SELECT entry_id, at, reason FROM suppressed WHERE entry_id = ANY($1)", [[...entryIds]]);
    return Object.fromEntries(rows.map((row) => [row.entry_id, { at: row.at, reason: row.reason }]));
  }

  /**
   * `kaiawatch store migrate`: copies a whole store into this one in one transaction, entries
   * with their state, attempts and order. A database that already has cursors or entries is
   * refused unless `force`; then what it has wins (ON CONFLICT DO NOTHING on cursor keys,
   * entry ids and meta keys), so running the copy again repeats nothing.
   */
  async importStore(
    data: { cursors: Cursor[]; entries: OutboxEntry[]; meta: Record<string, unknown>; stamps?: CooldownStamp[]; notes?: Array<{ id: string } & SuppressedNote>; silences?: StoredSilence[]; episodes?: BalanceEpisode[]; absences?: AbsenceState[]; attempts?: DeliveryAttempt[]; witnesses?: Witness[] },
    options: { force?: boolean } = {},
  ): Promise<{ cursors: number; entries: number; meta: number }> {
    return this.transaction(async (client) => {
      // Taken first: two copies at once would each find the database empty.
      await client.query("LOCK TABLE cursors, outbox, meta IN SHARE ROW EXCLUSIVE MODE");
      const found = (await client.query<{ cursors: number; outbox: number }>("SELECT (SELECT count(*)::int FROM cursors) AS cursors, (SELECT count(*)::int FROM outbox) AS outbox")).rows[0]!;
      if (options.force !== true && (found.cursors > 0 || found.outbox > 0)) {
        throw new StoreError("KW_STORE_MIGRATE_TARGET", `the PostgreSQL store ${this.path} already has ${found.cursors} cursors and ${found.outbox} outbox entries; nothing was copied (--force copies what it lacks and keeps what it has)`);
      }
      let cursors = 0;
      for (const cursor of data.cursors) {
        checkCursor(cursor);
        const result = await client.query("INSERT INTO cursors (key, block, cursor) VALUES ($1, $2, $3::jsonb) ON CONFLICT (key) DO NOTHING", [cursor.key, cursor.block, cursorDocument(cursor)]);
        cursors += result.rowCount ?? 0;
      }
      let entries = 0;
      for (const n of (await insertNew(client, data.entries)).values()) entries += n;
      let meta = 0;
      for (const [key, value] of Object.entries(data.meta)) {
        const result = await client.query("INSERT INTO meta (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO NOTHING", [key, JSON.stringify(value)]);
        meta += result.rowCount ?? 0;
      }
      for (const stamp of data.stamps ?? []) {
        await client.query("INSERT INTO cooldowns (sink, rule, key, at_ms, entry_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING", [stamp.sink, stamp.rule, stamp.key, stamp.at, stamp.entryId ?? null]);
      }
      for (const note of data.notes ?? []) {
        await client.query("INSERT INTO suppressed (entry_id, at, reason) SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM outbox WHERE id = $1) ON CONFLICT DO NOTHING", [note.id, note.at, note.reason]);
      }
      for (const silence of data.silences ?? []) {
        await client.query(
          "INSERT INTO silences (id, rule, match, matchers, reason, created_at, expires_at, expires_ms, suppressed) VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
          [silence.id, silenceColumns(silence).rule, JSON.stringify(silence.match), silenceColumns(silence).matchers, silence.reason, silence.created_at, silence.expires_at, Date.parse(silence.expires_at), silence.suppressed],
        );
      }
      // An open balance episode goes on under its id after the move (its resolve closes the same incident).
      for (const episode of data.episodes ?? []) {
        await client.query("INSERT INTO balance_episodes (rule, address, asset, alert, clear, repeats, reminded_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7) ON CONFLICT DO NOTHING", [episode.rule, episode.address, episode.asset, JSON.stringify(episode.alert), episode.clear, episode.repeats, episode.reminded_at]);
      }
      // An absence rule goes on with what it observed, and an open absence under its id.
      for (const absence of data.absences ?? []) {
        await client.query("INSERT INTO absences (rule, state) VALUES ($1, $2::jsonb) ON CONFLICT DO NOTHING", [absence.rule, JSON.stringify(absence)]);
      }
      // The audit's witnesses, open and reported: a record seen by one reader is still audited after the move.
      for (const witness of data.witnesses ?? []) {
        await client.query(`INSERT INTO witnesses (${WITNESS_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`, [...witnessParams(witness).slice(0, -1), witness.missed_at ?? null]);
      }
      // The delivery history, oldest first (a listing gives it newest first), unless this
      // database has one already (a copy repeated with --force adds none twice).
      const attempts = [...(data.attempts ?? [])].reverse();
      const hasHistory = (await client.query("SELECT 1 FROM delivery_attempts LIMIT 1")).rowCount !== 0;
      for (let start = 0; start < attempts.length && !hasHistory; start += INSERT_CHUNK) {
        const chunk = attempts.slice(start, start + INSERT_CHUNK);
        await client.query(
          `INSERT INTO delivery_attempts (at_ms, alert_id, sink, rule, delivery_id, attempt, outcome, status, latency_ms, error)
           SELECT at_ms, alert_id, sink, rule, CASE WHEN delivery_id = alert_id THEN NULL ELSE delivery_id END, attempt, outcome, status, latency_ms, error
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::int[], $9::int[], $10::text[]) WITH ORDINALITY
             AS a(at_ms, alert_id, sink, rule, delivery_id, attempt, outcome, status, latency_ms, error, n) ORDER BY n`,
          [
            chunk.map((a) => Date.parse(a.at)),
            chunk.map((a) => a.alert_id),
            chunk.map((a) => a.sink),
            chunk.map((a) => a.rule),
            chunk.map((a) => a.delivery_id),
            chunk.map((a) => a.attempt),
            chunk.map((a) => a.outcome),
            chunk.map((a) => a.status ?? null),
            chunk.map((a) => a.latency_ms ?? null),
            chunk.map((a) => a.error ?? null),
          ],
        );
      }
      return { cursors, entries, meta };
    });
  }

  /**
   * Writes the deferred advances of quiet windows in one transaction (every other mutation
   * is committed before it resolves). Each advance is fenced by its epoch as a commitWindow
   * is: the lease rows are locked in key order (as renewals lock them: no deadlock), and an
   * advance whose lease this replica no longer holds at that epoch is dropped, the others
   * written. A failed write keeps them all for the next flush. The lease keeper flushes before
   * it gives a lease back, so that the next holder reads the cursor this replica reached.
   */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.writePending());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async writePending(): Promise<void> {
    if (this.closed) return;
    if (this.pending.size === 0) {
      // After a failed write, flush() tries the server with a small write of its own (as the
      // file store does): the dispatcher holds its sends until one succeeds (notify/outcome-gate.ts).
      if (this.lastWriteFailed && !this.readOnly) await this.probe();
      return;
    }
    const batch = [...this.pending].sort(([a], [b]) => compare(a, b));
    const refused = await this.transaction(
      async (client) => {
        const fenced = batch.filter(([, advance]) => advance.epoch !== undefined).map(([key]) => key);
        const leases = new Map<string, { owner: string | null; epoch: string }>();
        if (fenced.length > 0) {
          const rows = await client.query<{ key: string; owner: string | null; epoch: string }>('SELECT key, owner, epoch FROM leases WHERE key = ANY($1) ORDER BY key COLLATE "C" FOR UPDATE', [fenced]);
          for (const row of rows.rows) leases.set(row.key, row);
        }
        const accepted: Cursor[] = [];
        const dropped: string[] = [];
        for (const [key, advance] of batch) {
          const lease = leases.get(key);
          if (advance.epoch === undefined || (lease !== undefined && lease.owner === this.replicaId && Number(lease.epoch) === advance.epoch)) accepted.push(advance.cursor);
          else dropped.push(key);
        }
        if (accepted.length > 0) {
          // Never backwards: a window with alerts of the source may have committed past it meanwhile.
          await client.query(
            `INSERT INTO cursors (key, block, cursor) SELECT * FROM unnest($1::text[], $2::bigint[], $3::jsonb[])
             ON CONFLICT (key) DO UPDATE SET block = excluded.block, cursor = excluded.cursor WHERE cursors.block <= excluded.block`,
            [accepted.map((c) => c.key), accepted.map((c) => c.block), accepted.map((c) => cursorDocument(c))],
          );
        }
        return dropped;
      },
      // Quiet advances only: a crash that loses them re-scans empty blocks.
      { durable: false },
    );
    // What was deferred again meanwhile (a later window) stays for the next flush.
    for (const [key, advance] of batch) if (this.pending.get(key) === advance) this.pending.delete(key);
    if (refused.length > 0) {
      this.common.logger.info(
        { store: this.path, replica: this.replicaId, sources: refused.length, example: refused[0] },
        "cursor advances of sources whose lease this replica lost were not written; the replicas holding them now poll those windows",
      );
    }
  }

  /** A small real write: whether the server takes writes again (clears writeFailing() when it does). */
  private async probe(): Promise<void> {
    const at = JSON.stringify(new Date(this.common.now()).toISOString());
    await this.transaction(async (client) => {
      await client.query("INSERT INTO meta (key, value) VALUES ('store.last_probe', $1::jsonb) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [at]);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush().catch((error: unknown) => this.common.logger.warn({ store: this.path, err: describeError(error) }, "cannot write the last cursor advances before closing; those blocks are scanned again"));
    this.closed = true;
    await this.pool.end();
  }

  writeFailing(): boolean {
    return this.lastWriteFailed;
  }

  /**
   * Answers without the server too (with the counts it last read), so that /readyz and the
   * status page can say the store is down rather than fail themselves.
   */
  async stats(): Promise<StoreStats> {
    if (!this.closed) {
      try {
        const row = (
          await this.pool.query<{ bytes: string; outbox: number; alerts: number; cursors: number }>(
            "SELECT pg_database_size(current_database()) AS bytes, (SELECT count(*)::int FROM outbox) AS outbox, (SELECT count(*)::int FROM alerts) AS alerts, (SELECT count(*)::int FROM cursors) AS cursors",
          )
        ).rows[0];
        if (row !== undefined) this.lastCounts = { bytes: Number(row.bytes), outbox: row.outbox, alerts: row.alerts, cursors: row.cursors };
      } catch {
        // Unreachable: the last counts read, and lastWriteFailed tells the rest.
      }
    }
    return { writes: this.writes, failedWrites: this.failedWrites, lastWriteFailed: this.lastWriteFailed, ...this.lastCounts };
  }
}

/** The same order in every process (byte order, as COLLATE "C"), whatever the locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** An error the server answered with (a constraint, bad SQL): not a connection problem. */
/**
 * The server answered the query itself (bad SQL, a constraint): not an outage. A server that
 * is shutting down (57P01 "terminating connection due to administrator command", 57P02,
 * 57P03) or a broken connection (class 08) answers too, but that is the store going away:
 * unreachable, as a refused connect is. Seen in the chaos test: a read in flight when
 * PostgreSQL stopped came back as 57P01 and, taken for an answer, stopped the daemon.
 */
function isServerAnswer(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError)) return false;
  const code = error.code ?? "";
  return !code.startsWith("08") && !code.startsWith("57P");
}

const FOLLOWERS_PREFIX = followersKey("");

/** A stored cursor with the generation of its followers, when it has had any (Cursor.followers). */
function withFollowers(cursor: Cursor, followers: number | null): Cursor {
  return followers === null ? cursor : { ...cursor, followers: Number(followers) };
}

/** Followers written at once by followCursor: 100,000 watches in 20 statements of one transaction. */
const FOLLOWERS_PER_STATEMENT = 5_000;

/** Raises the generation of `source`'s followers (Store.followCursor) and returns it. */
async function bumpFollowers(client: Queryable, source: string): Promise<number> {
  const row = (
    await client.query<{ value: number }>(
      `INSERT INTO meta (key, value) VALUES ($1, '1'::jsonb) ON CONFLICT (key) DO UPDATE SET value = to_jsonb(COALESCE((meta.value #>> '{}')::bigint, 0) + 1) RETURNING value`,
      [followersKey(source)],
    )
  ).rows[0]!;
  return Number(row.value);
}

/** The cursors `keys` are written to follow `follows` (or nothing): each source they followed until now has its followers changed. */
async function bumpFollowersOf(client: Queryable, keys: readonly string[], follows: string | undefined): Promise<void> {
  const sources = await client.query<{ source: string }>("SELECT DISTINCT cursor->>'follows' AS source FROM cursors WHERE key = ANY($1::text[]) AND cursor ? 'follows'", [keys]);
  for (const { source } of sources.rows) if (source !== follows) await bumpFollowers(client, source);
}

async function upsertCursor(client: Queryable, cursor: Cursor): Promise<void> {
  await client.query(
    "INSERT INTO cursors (key, block, cursor) VALUES ($1, $2, $3::jsonb) ON CONFLICT (key) DO UPDATE SET block = excluded.block, cursor = excluded.cursor",
    [cursor.key, cursor.block, cursorDocument(cursor)],
  );
}

/**
 * Adds the entries whose id is new (in their order), and the document of each alert they
 * deliver once (unless kept already); returns how many entries were added per sink. Only the
 * alerts of added entries are encoded and sent: a re-scan of known entries writes nothing.
 */
async function insertNew(client: Queryable, entries: readonly OutboxEntry[]): Promise<Map<string, number>> {
  const bySink = new Map<string, number>();
  for (let start = 0; start < entries.length; start += INSERT_CHUNK) {
    const chunk = entries.slice(start, start + INSERT_CHUNK);
    const params: unknown[] = [];
    const rows = chunk.map((entry) => {
      const values = entryParams(entry);
      const placeholders = INSERT_COLUMNS.map((column) => {
        params.push(values[column]);
        return `$${params.length}`;
      });
      return `(${placeholders.join(", ")})`;
    });
    const result = await client.query<{ sink: string; alert_id: string }>(
      `INSERT INTO outbox (${INSERT_COLUMNS.join(", ")}) VALUES ${rows.join(", ")} ON CONFLICT (id) DO NOTHING RETURNING sink, alert_id`,
      params,
    );
    for (const row of result.rows) bySink.set(row.sink, (bySink.get(row.sink) ?? 0) + 1);
    const added = new Set(result.rows.map((row) => row.alert_id));
    const alerts = new Map(chunk.filter((entry) => added.has(entry.alert.id)).map((entry) => [entry.alert.id, entry.alert]));
    if (alerts.size > 0) {
      await client.query("INSERT INTO alerts (id, document) SELECT * FROM unnest($1::text[], $2::json[]) ON CONFLICT (id) DO NOTHING", [
        [...alerts.keys()],
        [...alerts.values()].map((alert) => JSON.stringify(alert)),
      ]);
    }
  }
  return bySink;
}

/**
 * The history rows of a batch's changes, in one statement, in the transaction of the changes:
 * the entry's alert, sink and rule from its outbox row (an entry the batch did not find was
 * refused before this).
 */
async function insertAttempts(client: Queryable, changes: readonly OutboxChange[]): Promise<void> {
  const ids: string[] = [];
  const rows = { at: [] as number[], delivery: [] as string[], attempt: [] as number[], outcome: [] as string[], status: [] as Array<number | null>, latency: [] as Array<number | null>, error: [] as Array<string | null> };
  for (const change of changes) {
    const attempt = attemptOfChange(change);
    if (attempt === undefined) continue;
    ids.push(change.id);
    rows.at.push(attempt.at_ms);
    rows.delivery.push(attempt.delivery_id);
    rows.attempt.push(attempt.attempt);
    rows.outcome.push(attempt.outcome);
    rows.status.push(attempt.status);
    rows.latency.push(attempt.latency_ms);
    rows.error.push(attempt.error);
  }
  if (ids.length === 0) return;
  await client.query(
    `INSERT INTO delivery_attempts (at_ms, alert_id, sink, rule, delivery_id, attempt, outcome, status, latency_ms, error)
     SELECT a.at_ms, o.alert_id, o.sink, o.rule, CASE WHEN a.delivery_id = o.alert_id THEN NULL ELSE a.delivery_id END, a.attempt, a.outcome, a.status, a.latency_ms, a.error
     FROM unnest($1::text[], $2::bigint[], $3::text[], $4::int[], $5::text[], $6::int[], $7::int[], $8::text[]) WITH ORDINALITY AS a(id, at_ms, delivery_id, attempt, outcome, status, latency_ms, error, n)
     JOIN outbox o ON o.id = a.id ORDER BY a.n`,
    [ids, rows.at, rows.delivery, rows.attempt, rows.outcome, rows.status, rows.latency, rows.error],
  );
}

/** One allowed change (checked before). */
async function applyChange(client: Queryable, change: OutboxChange): Promise<void> {
  switch (change.kind) {
    case "delivered": {
      const changed = await client.query("UPDATE outbox SET state = 'delivered', attempts = attempts + 1, delivered_at = $1, delivered_ms = $2 WHERE id = $3 AND state <> 'delivered'", [
        change.at,
        msOf(change.at),
        change.id,
      ]);
      if ((changed.rowCount ?? 0) > 0 && change.suppressed !== undefined) {
        await client.query("INSERT INTO suppressed (entry_id, at, reason) VALUES ($1, $2, $3) ON CONFLICT (entry_id) DO NOTHING", [change.id, change.at, change.suppressed]);
      }
      return;
    }
    case "failed":
      await client.query(
        "UPDATE outbox SET attempts = attempts + 1, last_error = $1, next_attempt_at = $2, due_ms = $3 WHERE id = $4",
        [change.error, change.next_attempt_at, msOf(change.next_attempt_at), change.id],
      );
      return;
    case "defer":
      await client.query("UPDATE outbox SET next_attempt_at = $1, due_ms = $2, last_error = $3 WHERE id = $4", [change.until, msOf(change.until), change.note, change.id]);
      return;
    case "dead":
      await client.query("UPDATE outbox SET state = 'dead', attempts = attempts + 1, dead_reason = $1 WHERE id = $2 AND state <> 'dead'", [
        change.reason,
        change.id,
      ]);
      return;
    case "requeue":
      // A fresh digest: reusing the old group id would make a receiver drop it as a duplicate.
      await client.query(
        "UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = $1, due_ms = $2, group_id = NULL, dead_reason = NULL WHERE id = $3 AND state <> 'pending'",
        [change.at, msOf(change.at), change.id],
      );
      return;
    case "group":
      await client.query("UPDATE outbox SET group_id = $1 WHERE id = $2", [change.group_id, change.id]);
      return;
  }
}
