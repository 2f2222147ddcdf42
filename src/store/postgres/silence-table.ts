import type { Silence } from "../../model/silence.js";
import type { Queryable } from "./rows.js";

/** A silence as the store keeps it, with the alerts it held back (counted by every replica together). */
export interface StoredSilence extends Silence {
  suppressed: number;
}

/**
 * The silences in PostgreSQL, one row each, shared by every replica and by
 * `kaiawatch silence`: a silence added through any of them is seen by all at their next
 * read. Rows never change but for a removal (removed_at) and the count; a row is deleted a
 * day after its silence expired.
 */
export interface SilenceTable {
  /** The silences in force at `now` (not removed, not expired), oldest first. */
  active(now: number): Promise<StoredSilence[]>;
  add(silence: Silence): Promise<void>;
  /** Removes the silence in force with this id; returns it, or undefined when there is none. */
  remove(id: string, now: number): Promise<Silence | undefined>;
  /** Adds to the counts of alerts held back: silence id → how many more. */
  count(held: ReadonlyMap<string, number>): Promise<void>;
}

/** How long a row outlives its silence (for a `silence list` just after expiry it is simply gone). */
const KEEP_EXPIRED_MS = 24 * 3600_000;

/** A silence as its row reads: the count of alerts it held back is a bigint (a string). */
interface Row extends Silence {
  suppressed: string;
}

/**
 * `read` runs a query outside a transaction, `write` inside one (the store's, which counts
 * and reports a failed write).
 */
export function createSilenceTable(db: { read: (sql: string, params: unknown[]) => Promise<unknown[]>; write: <T>(fn: (client: Queryable) => Promise<T>) => Promise<T> }): SilenceTable {
  return {
    async active(now) {
      const rows = (await db.read(
        `SELECT id, rule, match, reason, created_at, expires_at, suppressed FROM silences
         WHERE removed_at IS NULL AND expires_ms > $1 ORDER BY created_at COLLATE "C", id COLLATE "C"`,
        [now],
      )) as Row[];
      return rows.map((row) => ({ id: row.id, rule: row.rule, match: row.match, reason: row.reason, created_at: row.created_at, expires_at: row.expires_at, suppressed: Number(row.suppressed) }));
    },
    async add(silence) {
      const expires = Date.parse(silence.expires_at);
      if (Number.isNaN(expires)) throw new TypeError(`a silence's expires_at is not an ISO-8601 date: ${silence.expires_at}`);
      await db.write(async (client) => {
        // Adding is rare: the moment to forget silences long over.
        await client.query("DELETE FROM silences WHERE expires_ms < $1", [Date.parse(silence.created_at) - KEEP_EXPIRED_MS]);
        await client.query(
          `INSERT INTO silences (id, rule, match, reason, created_at, expires_at, expires_ms) VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
          [silence.id, silence.rule, JSON.stringify(silence.match), silence.reason, silence.created_at, silence.expires_at, expires],
        );
      });
    },
    async remove(id, now) {
      return db.write(async (client) => {
        const row = (
          await client.query<Row>(
            `UPDATE silences SET removed_at = $2 WHERE id = $1 AND removed_at IS NULL AND expires_ms > $3
             RETURNING id, rule, match, reason, created_at, expires_at, suppressed`,
            [id, new Date(now).toISOString(), now],
          )
        ).rows[0];
        return row === undefined ? undefined : { id: row.id, rule: row.rule, match: row.match, reason: row.reason, created_at: row.created_at, expires_at: row.expires_at };
      });
    },
    async count(held) {
      if (held.size === 0) return;
      // Locked in id order, as every count locks them: two replicas' counts never deadlock.
      const ids = [...held.keys()].sort();
      await db.write(async (client) => {
        for (const id of ids) await client.query("UPDATE silences SET suppressed = suppressed + $2 WHERE id = $1", [id, held.get(id) ?? 0]);
      });
    },
  };
}
