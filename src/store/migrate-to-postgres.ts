import { existsSync } from "node:fs";
import type { Common } from "../common/common.js";
import { StoreError } from "./errors.js";
import { openSqliteStore } from "./open-store.js";
import { createPostgresStore } from "./postgres/postgres-store.js";

export interface MigrateResult {
  cursors: number;
  entries: number;
  meta: number;
}

/**
 * `kaiawatch store migrate`: copies a file store's cursors, outbox (every state, with its
 * attempts, digests and order), meta, cooldown stamps, suppression notes, silences, open balance episodes, absence rules' states, the audit's witnesses and the delivery history into a PostgreSQL store, in one transaction of the
 * target. The file is opened with its lock, so a daemon still running on it is refused
 * (KW_STORE_LOCKED) rather than copied while it moves on; the file is left as it is.
 */
export async function migrateFileToPostgres(common: Common, options: { from: string; to: string; force?: boolean }): Promise<MigrateResult> {
  if (!existsSync(options.from)) throw new StoreError("KW_STORE_CORRUPT", `there is no store file at ${options.from}`);
  const source = await openSqliteStore(common, { path: options.from });
  try {
    const meta: Record<string, unknown> = {};
    for (const key of source.metaKeys()) meta[key] = await source.getMeta(key);
    const data = { cursors: await source.listCursors(), entries: await source.listOutbox(), meta, episodes: await source.listBalanceEpisodes(), absences: await source.listAbsences(), attempts: await source.listAttempts(), witnesses: [...(await source.listWitnesses({ missed: false })), ...(await source.listWitnesses({ missed: true }))], ...source.rowsToMigrate() };
    const target = await createPostgresStore(common, { url: options.to, replicaId: "store-migrate" });
    try {
      return await target.importStore(data, { force: options.force });
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}
