import { closeSync, copyFileSync, existsSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { openStore } from "../../../src/store/open-store.js";
import { inspectStoreFiles } from "../../../src/store/store-files.js";
import { cursor, entry } from "../fixtures/sample.js";
import { makeTempDir } from "../fixtures/temp-dir.js";
import { closedStore, hashes, STORE_FILES } from "./files.js";

/**
 * A refusal leaves the store exactly as found: the database, its -wal and its -shm, byte for
 * byte, all still there. These refusals come from SQLite's view of the store (the file checks
 * pass), so SQLite has opened it: before, closing that connection checkpointed the WAL into
 * the refused file and removed the WAL.
 */
let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

const PAGE = 4096;
const FRAME = 24 + PAGE;

/**
 * A store with history in its database and commits in its WAL, copied while open (as kill -9
 * leaves it) after `change` ran on a second connection beside the store's.
 */
async function crashedWith(change: (db: BetterSqlite3.Database) => void): Promise<string> {
  const live = join(temp.dir, "live.db");
  await closedStore(live, 400, 100);
  const store = await openStore(createTestCommon(), { path: live });
  for (let i = 1; i <= 10; i++) await store.commitWindow({ cursor: cursor("s2", i), entries: [entry(`wal-${i}`, "slack")] });
  const beside = new BetterSqlite3(live);
  change(beside);
  const path = join(temp.dir, "store.db");
  for (const suffix of STORE_FILES) copyFileSync(`${live}${suffix}`, `${path}${suffix}`);
  beside.close();
  await store.close();
  return path;
}

async function expectRefusedAsFound(path: string, code: string, message: RegExp): Promise<void> {
  expect(inspectStoreFiles(path).problem).toBeUndefined();
  const before = hashes(path);
  expect(Object.values(before)).not.toContain("absent");
  expect(statSync(`${path}-wal`).size).toBeGreaterThan(10 * FRAME);
  await expect(openStore(createTestCommon(), { path })).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
  expect(hashes(path)).toEqual(before);
  // Refused again the same way: nothing was replayed or repaired in between.
  await expect(openStore(createTestCommon(), { path })).rejects.toMatchObject({ code });
  expect(hashes(path)).toEqual(before);
}

describe("a refused store is left byte for byte as found", () => {
  it("a store of a newer kaiawatch (KW_STORE_VERSION)", async () => {
    const path = await crashedWith((db) => db.pragma("user_version = 99"));
    await expectRefusedAsFound(path, "KW_STORE_VERSION", /schema version 99/);
  });

  it("an SQLite database without kaiawatch's tables (KW_STORE_CORRUPT)", async () => {
    const path = await crashedWith((db) => db.exec("DROP TABLE silences"));
    await expectRefusedAsFound(path, "KW_STORE_CORRUPT", /missing: silences/);
  });

  it("damage only SQLite's page check sees (KW_STORE_CORRUPT)", async () => {
    const path = await crashedWith(() => undefined);
    // Two cells of one b-tree page in the database file (not in the WAL) made to overlap: every
    // header field stays plausible, but the page's bytes are used twice.
    const inWal = new Set<number>();
    const wal = readFileSync(`${path}-wal`);
    for (let at = 32; at + FRAME <= wal.length; at += FRAME) inWal.add(wal.readUInt32BE(at));
    const file = readFileSync(path);
    let target: number | undefined;
    for (let page = Math.floor(file.length / PAGE / 2); page > 2 && target === undefined; page--) {
      const at = (page - 1) * PAGE;
      if (!inWal.has(page) && (file[at] === 13 || file[at] === 10) && file.readUInt16BE(at + 3) >= 2) target = page;
    }
    expect(target).toBeDefined();
    const at = (target! - 1) * PAGE;
    const fd = openSync(path, "r+");
    try {
      writeSync(fd, file.subarray(at + 8, at + 10), 0, 2, at + 10);
    } finally {
      closeSync(fd);
    }
    await expectRefusedAsFound(path, "KW_STORE_CORRUPT", /SQLite's check found damage/);
  });

  it("a refused read-only open leaves the database and the WAL as found", async () => {
    const path = await crashedWith((db) => db.pragma("user_version = 99"));
    const before = hashes(path);
    await expect(openStore(createTestCommon(), { path, readOnly: true })).rejects.toMatchObject({ code: "KW_STORE_VERSION" });
    const after = hashes(path);
    expect({ db: after.db, wal: after["-wal"] }).toEqual({ db: before.db, wal: before["-wal"] });
    expect(existsSync(`${path}-shm`)).toBe(true);
  });
});
