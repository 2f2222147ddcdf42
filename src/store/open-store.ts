import { closeSync, existsSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { randomBytes, randomInt } from "node:crypto";
import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import BetterSqlite3, { type Database } from "better-sqlite3";
import type { Common } from "../common/common.js";
import { fsyncDirectorySync, fsyncFileSync } from "./durable-file.js";
import { StoreError } from "./errors.js";
import { createPostgresStore, type PostgresTimeouts } from "./postgres/postgres-store.js";
import { createSchema, SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION, tablesOfVersion } from "./sqlite-schema.js";
import { isCorruption, SqliteStore } from "./sqlite-store.js";
import type { WriteBeacon } from "../common/stall-beacon.js";
import { acquireStoreLock, type StoreLock } from "./store-lock.js";
import { inspectStoreFiles } from "./store-files.js";
import { ensureStoreFolderWritable } from "./store-folder.js";
import type { Store, StoreFaults } from "./types.js";

export interface OpenStoreOptions {
  path: string;
  /**
   * postgres://… : open the PostgreSQL store shared by replicas instead of the file at
   * `path` (config `store.url`, a secret).
   */
  url?: string;
  /** With `url`: this replica's id and its lease duration (config `store.replica_id`, `store.lease`). */
  replicaId?: string;
  leaseMs?: number;
  /** With `url`: how long to wait for the server (config store.statement_timeout, lock_timeout, pool_timeout). */
  timeouts?: Partial<PostgresTimeouts>;
  /**
   * Read without taking the lock, for listing commands while a daemon runs (SQLite's WAL
   * lets a reader see the last commit while the daemon writes). Mutations are refused.
   */
  readOnly?: boolean;
  /**
   * With `readOnly`: the silences may still be written (`kaiawatch silence` beside a running
   * daemon): the file store's on a connection of its own, in short transactions.
   */
  silencesWritable?: boolean;
  /** A missing store file is refused (KW_STORE_MISSING) instead of starting empty: for commands that only read or change what is there. */
  mustExist?: boolean;
  /**
   * Check every page of the database at open (`PRAGMA quick_check`) whatever its size. By
   * default only a writable open of a database of up to QUICK_CHECK_MAX_BYTES is checked
   * whole (a read-only listing never writes, and should not wait): the check reads
   * the whole file (measured: 0.3 s for 22 MB, 1.1 s for 214 MB, 32 s for 2.1 GB); a larger
   * one gets the checks of store-files.ts, and SQLite checks each page it reads anyway.
   */
  fullCheck?: boolean;
  /**
   * A file the store had under an earlier name (the default was ./data/kaiawatch.json, an
   * SQLite database all the same): when `path` does not exist and this does, a writable open
   * renames it (and its -wal and -shm) to `path` once, under both locks; a read-only open reads it in place.
   */
  renameFrom?: string;
  /**
   * Where the file store says that a write starts and ends: the daemon's stall beacon, read by
   * the status server's thread (a write held on a frozen disk fails /healthz instead of freezing it).
   */
  writeBeacon?: WriteBeacon;
  /** Tests: faults injected into the file store's writes (storeFaults in sqlite-store.ts). */
  faults?: StoreFaults;
}

/** The largest database checked whole at every open (SQLite's quick_check, about 0.3 s at this size). */
export const QUICK_CHECK_MAX_BYTES = 32 * 1024 * 1024;

/** SQLite's page cache per connection, in KiB: enough for the indexes' upper levels, bounded whatever the outbox holds. */
const CACHE_KIB = 16 * 1024;
const SQLITE_MAGIC = "SQLite format 3\u0000";

/** What lies at the store path. */
type Found = { kind: "missing" } | { kind: "sqlite" };

/**
 * Opens the store of the options: PostgreSQL with `url`, else the file (openSqliteStore).
 * Code outside src/store/ opens the store through openBackend (backend.ts).
 */
export async function openStore(common: Common, options: OpenStoreOptions): Promise<Store> {
  if (options.url !== undefined) {
    return createPostgresStore(common, { url: options.url, replicaId: options.replicaId ?? defaultReplicaId(), leaseMs: options.leaseMs, readOnly: options.readOnly, silencesWritable: options.silencesWritable, timeouts: options.timeouts });
  }
  return openSqliteStore(common, options);
}

/**
 * Opens the file store: takes the lock (unless read-only), checks what is at the path, and
 * opens it. A missing file starts an empty store (created at once, so that an unwritable
 * location fails at start-up rather than at the first alert). Anything else (an empty file,
 * a damaged or foreign file) stops with KW_STORE_CORRUPT and is left as it is.
 */
export async function openSqliteStore(common: Common, options: OpenStoreOptions): Promise<SqliteStore> {
  const readOnly = options.readOnly ?? false;
  const legacy = options.renameFrom === undefined ? undefined : resolve(options.renameFrom);
  const adopt = legacy !== undefined && legacy !== resolve(options.path) && !existsSync(resolve(options.path)) && existsSync(legacy);
  // Read where the store still is: a command beside a daemon of the earlier name.
  const path = adopt && readOnly ? legacy : resolve(options.path);
  const logger = common.logger.child({ subsystem: "store" });
  let lock: StoreLock | undefined;
  if (!readOnly) {
    await ensureStoreFolderWritable(path);
    lock = await acquireStoreLock(path, logger);
    if (adopt) await adoptLegacyStore(legacy, path, logger).catch(async (error: unknown) => {
      await lock!.release();
      throw error;
    });
  }
  let db: Database | undefined;
  try {
    const found = await inspect(path);
    let files: string[] = [path, `${path}-wal`];
    if (found.kind === "missing") {
      if (options.mustExist === true) throw new StoreError("KW_STORE_MISSING", `no store at ${path} yet: kaiawatch has not run with this store`);
      // A WAL without its database would be replayed into the new one: someone moved the file away and left half of it.
      if (existsSync(`${path}-wal`)) throw corrupt(path, `${path}-wal exists without the database beside it; move it away too to start empty`);
      if (readOnly) {
        db = memoryStore();
        files = [];
      } else {
        db = createStore(path);
      }
      checkStore(db, path, false);
    } else {
      // SQLite's whole-file check where the store will be written (the daemon's start), not for a listing.
      db = inspectExisting(path, { holdsLock: lock !== undefined, quickCheck: options.fullCheck === true || (!readOnly && statSync(path).size <= QUICK_CHECK_MAX_BYTES) });
      // A connection that writes (the daemon's, or silences beside the daemon) once the checks passed.
      if (!readOnly || options.silencesWritable === true) {
        db.close();
        db = openExisting(path, false);
      }
      const version = db.pragma("user_version", { simple: true }) as number;
      if (version < SQLITE_SCHEMA_VERSION) {
        // Only the holder of the store lock upgrades: a reader beside a running daemon of the
        // earlier version must not change the tables under it.
        if (lock === undefined) {
          throw new StoreError("KW_STORE_VERSION", `the store file ${path} has schema version ${version}, of an earlier kaiawatch; this one reads ${SQLITE_SCHEMA_VERSION}. Start the daemon (kaiawatch run) once: it upgrades the store`);
        }
        upgradeSqlite(db, version, logger);
      }
    }
    if (files.length > 0) tune(db, readOnly);
    return new SqliteStore(common, logger, db, path, readOnly, lock, files, readOnly && options.silencesWritable === true && files.length > 0, { beacon: options.writeBeacon, faults: options.faults });
  } catch (error) {
    try {
      db?.close();
    } catch {
      // Closing a database that failed its checks.
    }
    await lock?.release();
    throw error;
  }
}

/**
 * Checks an existing store without changing a byte of it: its files as found (store-files.ts:
 * header, size, write-ahead log, the last pages), then SQLite's view on a read-only connection,
 * which never checkpoints the log into the database (the last writable connection to close
 * would, and remove the log). SQLite may still write its shared-memory index (`-shm`) while
 * reading; when the store is refused and this process holds the lock (no other process uses
 * the index), the index is put back as it was found, or removed if it was not there.
 */
function inspectExisting(path: string, options: { holdsLock: boolean; quickCheck: boolean }): Database {
  const files = inspectStoreFiles(path);
  if (files.problem !== undefined) throw corrupt(path, files.problem);
  const shm = `${path}-shm`;
  const shmBefore = options.holdsLock ? readIfThere(shm) : undefined;
  const db = openExisting(path, true);
  try {
    checkStore(db, path, options.quickCheck);
    return db;
  } catch (error) {
    db.close();
    if (options.holdsLock) {
      if (shmBefore === undefined) rmSync(shm, { force: true });
      else if (!shmBefore.equals(readIfThere(shm) ?? Buffer.alloc(0))) writeFileSync(shm, shmBefore);
    }
    throw error;
  }
}

function readIfThere(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function corrupt(path: string, why: string, cause?: unknown): StoreError {
  return new StoreError(
    "KW_STORE_CORRUPT",
    `the store file ${path} is not a kaiawatch store (${why}); kaiawatch will not overwrite it: repair it, or move it away to start empty`,
    cause === undefined ? {} : { cause },
  );
}


async function inspect(path: string): Promise<Found> {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
    throw new StoreError("KW_STORE_CORRUPT", `cannot read the store file ${path}: ${(error as Error).message}`, { cause: error });
  }
  // Only a missing file starts empty: an empty one is a write that went wrong, not a new store.
  if (size === 0) throw corrupt(path, "the file is empty (0 bytes)");
  const head = Buffer.alloc(16);
  const fd = openSync(path, "r");
  try {
    readSync(fd, head, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (head.toString("latin1") === SQLITE_MAGIC) return { kind: "sqlite" };
  throw corrupt(path, "not an SQLite database");
}

function tune(db: Database, readOnly: boolean): void {
  db.pragma(`cache_size = -${CACHE_KIB}`);
  db.pragma("busy_timeout = 5000");
  if (readOnly) return;
  // WAL: a commit appends its pages to the log with checksums (a torn tail is ignored at
  // the next open), readers in other processes see the last commit, and FULL fsyncs the
  // log at every commit: a resolved commit survives a power cut.
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  // Checkpoints are run by the store between commits (see SqliteStore), not inside one.
  db.pragma("wal_autocheckpoint = 0");
  // After a checkpoint the log is reused from its start; this bounds what stays on disk.
  db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
}

function memoryStore(): Database {
  const db = new BetterSqlite3(":memory:");
  createSchema(db);
  return db;
}

/**
 * A new store at `path`, built beside it and renamed into place: a crash while it is being
 * created leaves no file at the path (a missing file starts empty again), never a torn one.
 */
function createStore(path: string): Database {
  try {
    buildBeside(path);
  } catch (error) {
    throw new StoreError("KW_STORE_WRITE_FAILED", `cannot create the store file ${path}: ${(error as Error).message}`, { cause: error });
  }
  return openExisting(path, false);
}

/**
 * Builds an empty database at `<path>.new`, makes it durable and renames it over `path`. A
 * leftover of an earlier attempt is removed first.
 */
function buildBeside(path: string): void {
  const building = `${path}.new`;
  for (const leftover of [building, `${building}-wal`, `${building}-shm`, `${building}-journal`]) rmSync(leftover, { force: true });
  const db = new BetterSqlite3(building);
  try {
    db.pragma("journal_mode = DELETE");
    db.pragma("synchronous = FULL");
    db.transaction(() => createSchema(db))();
    // The store's identity (store-files.ts): written into page 1 by every commit, so that a
    // write-ahead log can be told to belong to this database or to another.
    db.pragma(`application_id = ${randomInt(1, 2 ** 31)}`);
    // Kept in the file's header: the database opens in WAL mode from now on.
    db.pragma("journal_mode = WAL");
  } finally {
    db.close();
  }
  fsyncFileSync(building);
  renameSync(building, path);
  fsyncDirectorySync(dirname(path));
}

function openExisting(path: string, readOnly: boolean): Database {
  let db: Database | undefined;
  try {
    // Tuned only after checkStore: switching to WAL writes to the file, and a file that is
    // not ours must be left exactly as it is.
    db = new BetterSqlite3(path, { readonly: readOnly, fileMustExist: true });
    db.pragma("busy_timeout = 5000");
    return db;
  } catch (error) {
    db?.close();
    if (isCorruption(error)) throw corrupt(path, `SQLite: ${(error as Error).message}`, error);
    throw new StoreError("KW_STORE_WRITE_FAILED", `cannot open the store file ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** Brings a store of an earlier version to this one, a migration per version, all in one transaction. */
function upgradeSqlite(db: Database, from: number, logger: Common["logger"]): void {
  db.transaction(() => {
    for (let version = from; version < SQLITE_SCHEMA_VERSION; version++) {
      const migration = SQLITE_MIGRATIONS[version];
      if (migration === undefined) throw new StoreError("KW_STORE_VERSION", `no upgrade of the store from schema version ${version}`);
      db.exec(migration.sql);
      logger.info({ version: version + 1, description: migration.description }, "SQLite store migrated");
    }
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  })();
}

/** Refuses an SQLite file that is not a kaiawatch store, or one of a newer kaiawatch. */
function checkStore(db: Database, path: string, fullCheck: boolean): void {
  try {
    const version = db.pragma("user_version", { simple: true }) as number;
    const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((row) => row.name));
    // The tables of its own version: a store of an earlier one gets the later tables by its upgrade.
    const expected = tablesOfVersion(version);
    const missing = expected.filter((name) => !tables.has(name));
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new StoreError(
        "KW_STORE_VERSION",
        `the store file ${path} has schema version ${version}, written by a newer kaiawatch; this one knows up to ${SQLITE_SCHEMA_VERSION}. Upgrade kaiawatch`,
      );
    }
    if (version > 0 && version < SQLITE_SCHEMA_VERSION && missing.length > 0) {
      // The place for a migration once a release has been published; before that, builds of
      // development kept cooldowns and silences in meta values, and no upgrade exists.
      throw new StoreError(
        "KW_STORE_VERSION",
        `the store file ${path} has schema version ${version}, written by a development build before the first release; this kaiawatch reads version ${SQLITE_SCHEMA_VERSION} only. Move it away to start empty`,
      );
    }
    // An earlier released version with every table: upgraded once the store is open to write.
    const upgradable = SQLITE_MIGRATIONS[version] !== undefined && missing.length === 0;
    if (!upgradable && (missing.length > 0 || version !== SQLITE_SCHEMA_VERSION)) {
      throw corrupt(path, `an SQLite database without kaiawatch's tables (missing: ${missing.join(", ") || "none"}; schema version ${version})`);
    }
    // Reading the first rows of each table walks its root pages: a damaged header or root shows here.
    for (const name of expected) db.prepare(`SELECT * FROM ${name} LIMIT 1`).all();
    if (fullCheck) {
      const verdict = db.pragma("quick_check", { simple: true }) as string;
      if (verdict !== "ok") throw corrupt(path, `SQLite's check found damage: ${verdict}`);
    }
  } catch (error) {
    if (error instanceof StoreError) throw error;
    if (isCorruption(error)) throw corrupt(path, `SQLite: ${(error as Error).message}`, error);
    throw error;
  }
}

/** A replica id unique among the running ones: the host, the process and a random suffix. */
export function defaultReplicaId(): string {
  return `${hostname().toLowerCase().replace(/[^a-z0-9_-]+/g, "-")}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/**
 * Renames the store of an earlier default name to `path`, with its WAL and shared memory, once:
 * under the old name's lock too, so that a daemon still running on it is refused
 * (KW_STORE_LOCKED names it) rather than left writing to a file that moved.
 */
async function adoptLegacyStore(legacy: string, path: string, logger: Common["logger"]): Promise<void> {
  const legacyLock = await acquireStoreLock(legacy, logger);
  try {
    if (!existsSync(legacy) || existsSync(path)) return;
    // The WAL first: a crash between two renames leaves the database under its old name with
    // no WAL beside it under the new one (which the open refuses), never a WAL replayed into the wrong file.
    for (const suffix of ["-wal", "-shm", ""]) if (existsSync(`${legacy}${suffix}`)) renameSync(`${legacy}${suffix}`, `${path}${suffix}`);
    fsyncDirectorySync(dirname(path));
    logger.warn({ from: legacy, to: path }, "the store was renamed to its new default name (an SQLite database, not JSON); set store.path to keep another name");
  } finally {
    await legacyLock.release();
  }
}
