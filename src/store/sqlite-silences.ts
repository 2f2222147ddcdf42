import type { Statement } from "better-sqlite3";
import type { Silence } from "../model/silence.js";
import { expiresMsOf, KEEP_EXPIRED_MS, type SilenceStore } from "./silence-store.js";

/** A silence as its row reads (the match as JSON text). */
interface Row extends Omit<Silence, "match"> {
  match: string;
  suppressed: number;
}

const COLUMNS = "id, rule, match, reason, created_at, expires_at, suppressed";

function silenceOf(row: Row): Silence & { suppressed: number } {
  return { id: row.id, rule: row.rule, match: JSON.parse(row.match) as Record<string, string>, reason: row.reason, created_at: row.created_at, expires_at: row.expires_at, suppressed: row.suppressed };
}

/**
 * The silences in the SQLite store (see SilenceStore). `statement` prepares on the store's
 * connection; `write` runs its function in a write of the store's (the daemon's group commit,
 * or the short transaction of a CLI connection beside a running daemon) and resolves when it
 * is durable.
 */
export function createSqliteSilences(db: { statement: (sql: string) => Statement; write: <T>(fn: () => T) => Promise<T> }): SilenceStore {
  return {
    async active(now) {
      const rows = db.statement(`SELECT ${COLUMNS} FROM silences WHERE removed_at IS NULL AND expires_ms > ? ORDER BY created_at, id`).all(now) as Row[];
      return rows.map(silenceOf);
    },
    async add(silence) {
      const expires = expiresMsOf(silence);
      await db.write(() => {
        // Adding is rare: the moment to forget silences long over.
        db.statement("DELETE FROM silences WHERE expires_ms < ?").run(Date.parse(silence.created_at) - KEEP_EXPIRED_MS);
        db.statement("INSERT INTO silences (id, rule, match, reason, created_at, expires_at, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING").run(
          silence.id,
          silence.rule,
          JSON.stringify(silence.match),
          silence.reason,
          silence.created_at,
          silence.expires_at,
          expires,
        );
      });
    },
    async remove(id, now) {
      const row = await db.write(
        () => db.statement(`UPDATE silences SET removed_at = ? WHERE id = ? AND removed_at IS NULL AND expires_ms > ? RETURNING ${COLUMNS}`).get(new Date(now).toISOString(), id, now) as Row | undefined,
      );
      if (row === undefined) return undefined;
      const { suppressed: _suppressed, ...silence } = silenceOf(row);
      return silence;
    },
    async count(held) {
      if (held.size === 0) return;
      await db.write(() => {
        for (const [id, n] of held) db.statement("UPDATE silences SET suppressed = suppressed + ? WHERE id = ?").run(n, id);
      });
    },
  };
}
