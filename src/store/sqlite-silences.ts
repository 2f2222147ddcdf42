import type { Statement } from "better-sqlite3";
import type { Silence } from "../model/silence.js";
import { expiresMsOf, KEEP_EXPIRED_MS, silenceColumns, silenceOfColumns, type SilenceStore } from "./silence-store.js";

/** A silence as its row reads (the match and matchers as JSON text). */
export interface SqliteSilenceRow extends Omit<Silence, "match" | "rule" | "matchers"> {
  rule: string | null;
  match: string;
  matchers: string | null;
  suppressed: number;
}

export const SILENCE_COLUMNS = "id, rule, match, matchers, reason, created_at, expires_at, suppressed";

export function silenceOfSqliteRow(row: SqliteSilenceRow): Silence & { suppressed: number } {
  const silence = silenceOfColumns({ ...row, match: JSON.parse(row.match) as Record<string, string>, matchers: row.matchers === null ? null : (JSON.parse(row.matchers) as string[]) });
  return { ...silence, suppressed: row.suppressed };
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
      const rows = db.statement(`SELECT ${SILENCE_COLUMNS} FROM silences WHERE removed_at IS NULL AND expires_ms > ? ORDER BY created_at, id`).all(now) as SqliteSilenceRow[];
      return rows.map(silenceOfSqliteRow);
    },
    async add(silence) {
      const expires = expiresMsOf(silence);
      await db.write(() => {
        // Adding is rare: the moment to forget silences long over.
        db.statement("DELETE FROM silences WHERE expires_ms < ?").run(Date.parse(silence.created_at) - KEEP_EXPIRED_MS);
        const { rule, matchers } = silenceColumns(silence);
        db.statement("INSERT INTO silences (id, rule, match, matchers, reason, created_at, expires_at, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING").run(
          silence.id,
          rule,
          JSON.stringify(silence.match),
          matchers,
          silence.reason,
          silence.created_at,
          silence.expires_at,
          expires,
        );
      });
    },
    async remove(id, now) {
      const row = await db.write(
        () => db.statement(`UPDATE silences SET removed_at = ? WHERE id = ? AND removed_at IS NULL AND expires_ms > ? RETURNING ${SILENCE_COLUMNS}`).get(new Date(now).toISOString(), id, now) as SqliteSilenceRow | undefined,
      );
      if (row === undefined) return undefined;
      const { suppressed: _suppressed, ...silence } = silenceOfSqliteRow(row);
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
