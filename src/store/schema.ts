import type { StoreData } from "./types.js";
import type { OutboxState } from "../model/outbox-entry.js";
import { StoreError } from "./errors.js";
import { isCursorBlock } from "./sqlite-store.js";

/**
 * The last version of the JSON store file (kaiawatch before SQLite). Such a file is read
 * only to be upgraded (open-store.ts); SQLite stores carry their version in user_version.
 */
export const SCHEMA_VERSION = 1;

/**
 * Upgrades of the JSON file, keyed by the version they upgrade FROM: `MIGRATIONS[n]` turns
 * a version-n file into a version-(n+1) one, up to 1, the last JSON version (none was ever
 * needed). Later changes of the store's shape are SQLite migrations (user_version).
 */
export type Migration = (data: Record<string, unknown>) => Record<string, unknown>;
export const MIGRATIONS: Readonly<Record<number, Migration>> = {};

/**
 * Checks a parsed store file and brings it to SCHEMA_VERSION. A file from a newer kaiawatch
 * is refused rather than read wrongly or downgraded on the next write.
 */
export function upgradeStoreData(
  raw: unknown,
  path: string,
  migrations: Readonly<Record<number, Migration>> = MIGRATIONS,
): { data: StoreData; migratedFrom: number | undefined } {
  const notOurs = (why: string) => new StoreError("KW_STORE_CORRUPT", `the store file ${path} is not a kaiawatch store (${why}); kaiawatch will not overwrite it`);
  if (!isPlainObject(raw)) throw notOurs("not a JSON object");
  const version = raw.schema_version;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0) throw notOurs("no valid schema_version");
  if (version > SCHEMA_VERSION) {
    throw new StoreError(
      "KW_STORE_VERSION",
      `the store file ${path} has schema_version ${version}, written by a newer kaiawatch; this one knows up to ${SCHEMA_VERSION}. Upgrade kaiawatch`,
    );
  }
  let data: Record<string, unknown> = raw;
  for (let v = version; v < SCHEMA_VERSION; v++) {
    const step = migrations[v];
    if (step === undefined) {
      throw new StoreError("KW_STORE_VERSION", `the store file ${path} has schema_version ${version} and no migration from version ${v} exists`);
    }
    data = { ...step(data), schema_version: v + 1 };
  }
  checkShape(data, notOurs);
  return { data: data as unknown as StoreData, migratedFrom: version === SCHEMA_VERSION ? undefined : version };
}

const STATES: ReadonlySet<OutboxState> = new Set(["pending", "delivered", "dead"]);

function checkShape(data: Record<string, unknown>, notOurs: (why: string) => StoreError): void {
  const { cursors, outbox, meta } = data;
  if (!isPlainObject(cursors)) throw notOurs("cursors is not an object");
  for (const [key, cursor] of Object.entries(cursors)) {
    if (!isPlainObject(cursor) || cursor.key !== key || !isCursorBlock(cursor.block)) throw notOurs(`cursor ${JSON.stringify(key)} is malformed`);
  }
  if (!Array.isArray(outbox)) throw notOurs("outbox is not an array");
  const ids = new Set<string>();
  outbox.forEach((entry: unknown, index) => {
    if (!isPlainObject(entry) || typeof entry.id !== "string" || typeof entry.sink !== "string" || !STATES.has(entry.state as OutboxState)) {
      throw notOurs(`outbox entry ${index} is malformed`);
    }
    if (ids.has(entry.id)) throw notOurs(`outbox id ${JSON.stringify(entry.id)} appears twice`);
    ids.add(entry.id);
  });
  if (!isPlainObject(meta)) throw notOurs("meta is not an object");
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
