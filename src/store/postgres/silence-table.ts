import type { Silence } from "../../model/silence.js";
import { expiresMsOf, KEEP_EXPIRED_MS, type SilenceStore } from "../silence-store.js";
import type { Queryable } from "./rows.js";

/** A silence as its row reads: the count of alerts it held back is a bigint (a string). */
interface Row extends Silence {
  suppressed: string;
}

/**
 * The silences in PostgreSQL (see SilenceStore). `read` runs a query outside a transaction, `write` inside one (the store's, which counts
 * and reports a failed write).
 */
export function createSilenceTable(db: { read: (sql: string, params: unknown[]) => Promise<unknown[]>; write: <T>(fn: (client: Queryable) => Promise<T>) => Promise<T> }): SilenceStore {
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
      const expires = expiresMsOf(silence);
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
