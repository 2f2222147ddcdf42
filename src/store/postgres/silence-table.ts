import type { Silence } from "../../model/silence.js";
import { expiresMsOf, KEEP_EXPIRED_MS, silenceColumns, silenceOfColumns, type SilenceStore } from "../silence-store.js";
import type { Queryable } from "./rows.js";

/** A silence as its row reads: a NULL rule or matchers, and the count of alerts it held back as a bigint (a string). */
interface Row extends Omit<Silence, "rule" | "matchers"> {
  rule: string | null;
  matchers: string[] | null;
  suppressed: string;
}

const COLUMNS = "id, rule, match, matchers, reason, created_at, expires_at, suppressed";

/**
 * The silences in PostgreSQL (see SilenceStore). `read` runs a query outside a transaction, `write` inside one (the store's, which counts
 * and reports a failed write).
 */
export function createSilenceTable(db: { read: (sql: string, params: unknown[]) => Promise<unknown[]>; write: <T>(fn: (client: Queryable) => Promise<T>) => Promise<T> }): SilenceStore {
  return {
    async active(now) {
      const rows = (await db.read(
        `SELECT ${COLUMNS} FROM silences
         WHERE removed_at IS NULL AND expires_ms > $1 ORDER BY created_at COLLATE "C", id COLLATE "C"`,
        [now],
      )) as Row[];
      return rows.map((row) => ({ ...silenceOfColumns(row), suppressed: Number(row.suppressed) }));
    },
    async add(silence) {
      const expires = expiresMsOf(silence);
      await db.write(async (client) => {
        // Adding is rare: the moment to forget silences long over.
        await client.query("DELETE FROM silences WHERE expires_ms < $1", [Date.parse(silence.created_at) - KEEP_EXPIRED_MS]);
        await client.query(
          `INSERT INTO silences (id, rule, match, matchers, reason, created_at, expires_at, expires_ms) VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
          [silence.id, silenceColumns(silence).rule, JSON.stringify(silence.match), silenceColumns(silence).matchers, silence.reason, silence.created_at, silence.expires_at, expires],
        );
      });
    },
    async remove(id, now) {
      return db.write(async (client) => {
        const row = (
          await client.query<Row>(
            `UPDATE silences SET removed_at = $2 WHERE id = $1 AND removed_at IS NULL AND expires_ms > $3
             RETURNING ${COLUMNS}`,
            [id, new Date(now).toISOString(), now],
          )
        ).rows[0];
        return row === undefined ? undefined : silenceOfColumns(row);
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
