import type pg from "pg";
import type { Common } from "../../common/common.js";
import type { ReplicaRecord } from "../backend.js";

/** A source this replica holds until `expiresMs`, unless renewed; `epoch` fences its commits. */
export interface Lease {
  key: string;
  epoch: number;
  expiresMs: number;
}

/** A lease as /status shows it. */
export interface LeaseRow {
  key: string;
  owner: string | undefined;
  epoch: number;
  expiresMs: number;
}

/** A replica's heartbeat row (the port's ReplicaRecord). */
export type ReplicaRow = ReplicaRecord;

/**
 * Sources leased to replicas, so that each source is polled by one replica at a time.
 *
 * A replica heartbeats, claims free or expired sources up to its fair share, renews the ones
 * it holds before they expire, and releases them when it stops. One that stops renewing
 * (SIGKILL, network loss) keeps its sources until their leases expire; then the others claim
 * them. Every claim adds one to the source's epoch, and a commit fenced with an older epoch
 * is refused (PostgresStore.commitWindow), so a replica that wakes up late cannot move a
 * cursor it lost.
 *
 * Times are this replica's clock (`common.now()`): replicas must agree on the time to well
 * within a lease (NTP does), and tests move a fake clock instead of waiting.
 */
export interface Leases {
  /**
   * Makes sure every resource of the plan has a lease row (new ones start free), and removes
   * free or expired rows the plan no longer has: they would count in the fair share forever.
   */
  register(keys: readonly string[]): Promise<void>;
  /** Records this replica as live now, with what /status should show of it. */
  heartbeat(info?: Record<string, unknown>): Promise<void>;
  /**
   * Heartbeats, then claims free or expired sources, at most up to the fair share
   * (ceil(sources / live replicas) + slack) counting those it holds. Returns the new leases.
   */
  claim(): Promise<Lease[]>;
  /**
   * Heartbeats and extends every lease this replica holds. `lost` are the sources this replica
   * held and holds no more (taken over after expiry): stop polling them. `surplus` are those it
   * holds above the even share (another replica joined): still held and renewed here, they are
   * for the caller to release() once their work has stopped and its cursor advances are
   * written, as another replica may claim them the moment the release is written.
   */
  renew(): Promise<{ held: Lease[]; lost: string[]; surplus: string[] }>;
  /** Frees the given sources (all of this replica's by default) for the others at once. */
  release(keys?: readonly string[]): Promise<void>;
  /** At shutdown: frees every source and stops counting as live, so the others take over now. */
  leave(): Promise<void>;
  /** The leases this replica believes it holds (as of its last claim or renewal). */
  held(): Lease[];
  list(): Promise<LeaseRow[]>;
  replicas(): Promise<ReplicaRow[]>;
}

export interface LeasesOptions {
  db: Pick<pg.Pool, "query">;
  replicaId: string;
  /** How long a lease and a heartbeat count. Renew well within it (a third of it, say). */
  leaseMs: number;
  /** How many sources above an even share a replica may hold (default 1). */
  slack?: number;
}

/**
 * Rows of many leases are locked in key order, as PostgresStore.flush() locks those of its
 * batched cursor advances: a renewal and a flush of the same replica, running at once on two
 * connections, then never wait for each other in a cycle (a deadlock).
 */
const IN_KEY_ORDER = 'ORDER BY key COLLATE "C" FOR UPDATE';

/** Leases in key order (byte order, as COLLATE "C"). */
const byKey = (a: Lease, b: Lease): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export function createLeases(common: Common, options: LeasesOptions): Leases {
  const { db, replicaId, leaseMs } = options;
  const slack = options.slack ?? 1;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) throw new TypeError(`leaseMs must be a whole number ≥ 1, not ${leaseMs}`);
  const mine = new Map<string, Lease>();
  let started: number | undefined;
  let info: Record<string, unknown> = {};

  const heartbeat = async (next?: Record<string, unknown>): Promise<void> => {
    if (next !== undefined) info = next;
    const now = common.now();
    started ??= now;
    await db.query(
      `INSERT INTO replicas (id, started_ms, heartbeat_ms, info) VALUES ($1, $2, $3, $4::jsonb)
       ON CONFLICT (id) DO UPDATE SET started_ms = excluded.started_ms, heartbeat_ms = excluded.heartbeat_ms, info = excluded.info`,
      [replicaId, started, now, JSON.stringify(info)],
    );
  };

  /** ceil(sources / live replicas) + slack, and how many this replica holds now. */
  const share = async (now: number): Promise<{ fair: number; total: number; holding: number }> => {
    const row = (
      await db.query<{ total: number; live: number; holding: number }>(
        `SELECT (SELECT count(*)::int FROM leases) AS total,
                (SELECT count(*)::int FROM replicas WHERE heartbeat_ms > $1) AS live,
                (SELECT count(*)::int FROM leases WHERE owner = $2) AS holding`,
        [now - leaseMs, replicaId],
      )
    ).rows[0]!;
    // This replica has just heartbeaten, so live ≥ 1; max() guards a clock that jumped.
    return { fair: Math.ceil(row.total / Math.max(1, row.live)), total: row.total, holding: row.holding };
  };

  const remember = (rows: Array<{ key: string; epoch: string; expires_ms: string }>): Lease[] =>
    rows.map((row) => {
      const lease = { key: row.key, epoch: Number(row.epoch), expiresMs: Number(row.expires_ms) };
      mine.set(lease.key, lease);
      return lease;
    });

  const release = async (keys?: readonly string[]): Promise<void> => {
    const list = keys === undefined ? [...mine.keys()] : [...keys];
    await db.query(`UPDATE leases SET owner = NULL, expires_ms = 0 WHERE key IN (SELECT key FROM leases WHERE owner = $1 AND key = ANY($2) ${IN_KEY_ORDER}) AND owner = $1`, [replicaId, list]);
    for (const key of list) mine.delete(key);
  };

  return {
    async register(keys) {
      await db.query("DELETE FROM leases WHERE NOT (key = ANY($1::text[])) AND (owner IS NULL OR expires_ms <= $2)", [[...keys], common.now()]);
      if (keys.length === 0) return;
      await db.query("INSERT INTO leases (key) SELECT unnest($1::text[]) ON CONFLICT (key) DO NOTHING", [[...keys]]);
    },

    heartbeat,

    async claim() {
      await heartbeat();
      const now = common.now();
      const { fair, holding } = await share(now);
      const room = fair + slack - holding;
      if (room <= 0) return [];
      // The job-queue claim (as pg-boss and graphile-worker take jobs): the candidates are
      // locked with SKIP LOCKED, so replicas claiming together split the free sources instead
      // of queueing on the same rows, and the UPDATE re-checks each row as it locks it, so a
      // source another replica has just claimed is not taken twice.
      const result = await db.query<{ key: string; epoch: string; expires_ms: string }>(
        `UPDATE leases SET owner = $1, epoch = epoch + 1, expires_ms = $2, acquired_ms = $3
         WHERE key IN (
           SELECT key FROM leases WHERE owner IS NULL OR expires_ms <= $3
           ORDER BY key LIMIT $4
           FOR UPDATE SKIP LOCKED)
         AND (owner IS NULL OR expires_ms <= $3)
         RETURNING key, epoch, expires_ms`,
        [replicaId, now + leaseMs, now, room],
      );
      return remember(result.rows).sort(byKey);
    },

    async renew() {
      await heartbeat();
      const now = common.now();
      // An expired lease that nobody took is still this replica's (same owner, same epoch):
      // renewing it is safe, as a takeover would have changed the owner first.
      const result = await db.query<{ key: string; epoch: string; expires_ms: string }>(
        `UPDATE leases SET expires_ms = $2 WHERE key IN (SELECT key FROM leases WHERE owner = $1 ${IN_KEY_ORDER}) AND owner = $1 RETURNING key, epoch, expires_ms`,
        [replicaId, now + leaseMs],
      );
      const before = new Set(mine.keys());
      mine.clear();
      const held = remember(result.rows).sort(byKey);
      const { fair } = await share(now);
      // Down to the even share (not share + slack), so that the newcomer finds room.
      const surplus = held.length > fair + slack ? held.slice(fair).map((lease) => lease.key) : [];
      const lost = [...before].filter((key) => !mine.has(key)).sort();
      return { held, lost, surplus };
    },

    release,

    async leave() {
      await db.query(`UPDATE leases SET owner = NULL, expires_ms = 0 WHERE key IN (SELECT key FROM leases WHERE owner = $1 ${IN_KEY_ORDER}) AND owner = $1`, [replicaId]);
      mine.clear();
      await db.query("UPDATE replicas SET heartbeat_ms = 0 WHERE id = $1", [replicaId]);
    },

    held: () => [...mine.values()].map((lease) => ({ ...lease })),

    async list() {
      const result = await db.query<{ key: string; owner: string | null; epoch: string; expires_ms: string }>(
        'SELECT key, owner, epoch, expires_ms FROM leases ORDER BY key COLLATE "C"',
      );
      return result.rows.map((row) => ({ key: row.key, owner: row.owner ?? undefined, epoch: Number(row.epoch), expiresMs: Number(row.expires_ms) }));
    },

    async replicas() {
      const now = common.now();
      const result = await db.query<{ id: string; started_ms: string; heartbeat_ms: string; info: Record<string, unknown> }>(
        'SELECT id, started_ms, heartbeat_ms, info FROM replicas ORDER BY id COLLATE "C"',
      );
      return result.rows.map((row) => ({
        id: row.id,
        startedMs: Number(row.started_ms),
        heartbeatMs: Number(row.heartbeat_ms),
        info: row.info,
        live: Number(row.heartbeat_ms) > now - leaseMs,
      }));
    },
  };
}
