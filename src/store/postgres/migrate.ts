import type pg from "pg";
import type { Logger } from "../../common/logger.js";
import { StoreError } from "../errors.js";
import { MIGRATIONS, type Migration } from "./schema.js";

/**
 * The key of the transaction-level advisory lock that serialises migrations: replicas that
 * start together all try to migrate, and the lock makes the second wait for the first and
 * then find nothing left to do. (Any constant; this one spells "kwsc".)
 */
const MIGRATION_LOCK = 0x6b777363;

/**
 * Brings the database to the version of this code, one migration per transaction, each under
 * the advisory lock (so a crash half-way leaves a database at a whole version). A database
 * newer than this code is refused (KW_STORE_VERSION): an older replica must not write tables
 * it does not know. Returns the versions before and after.
 */
export async function migrate(
  client: pg.ClientBase,
  logger: Logger,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<{ from: number; to: number }> {
  let from: number | undefined;
  let version = 0;
  const latest = migrations.length === 0 ? 0 : migrations[migrations.length - 1]!.version;
  // One step more than there are migrations: the last pass only checks the version.
  for (let step = 0; step <= migrations.length; step++) {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
      await client.query("CREATE TABLE IF NOT EXISTS kaiawatch_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(), description text NOT NULL)");
      const row = (await client.query<{ version: number | null }>("SELECT max(version) AS version FROM kaiawatch_schema")).rows[0];
      version = row?.version ?? 0;
      from ??= version;
      if (version > latest) {
        throw new StoreError(
          "KW_STORE_VERSION",
          `the PostgreSQL store is at schema version ${version}, newer than this kaiawatch knows (${latest}); upgrade kaiawatch on every replica`,
        );
      }
      const first = migrations[0]?.version ?? 0;
      if (version > 0 && version < first) {
        // Where an upgrade of a released version would go; databases below the first release's version have none.
        throw new StoreError(
          "KW_STORE_VERSION",
          `the PostgreSQL store is at schema version ${version}, written by a development build before the first release; this kaiawatch starts at ${first}. Use an empty database`,
        );
      }
      const next = migrations.find((migration) => migration.version > version);
      if (next === undefined) {
        await client.query("COMMIT");
        break;
      }
      await client.query(next.sql);
      await client.query("INSERT INTO kaiawatch_schema (version, description) VALUES ($1, $2)", [next.version, next.description]);
      await client.query("COMMIT");
      logger.info({ version: next.version, description: next.description }, "PostgreSQL store migrated");
      version = next.version;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  }
  return { from: from ?? 0, to: version };
}

