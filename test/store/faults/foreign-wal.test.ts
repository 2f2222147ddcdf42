import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { openStore } from "../../../src/store/open-store.js";
import { makeTempDir } from "../fixtures/temp-dir.js";
import { crashedStore, hashes } from "./files.js";

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

describe("another database's write-ahead log beside the store", () => {
  it("is refused when it is another kaiawatch store's, and every byte stays as found", async () => {
    const ours = await crashedStore(temp.dir, "ours.db", { windows: 3 });
    const theirs = await crashedStore(temp.dir, "theirs.db", { windows: 30 });
    // Same schema, same page numbers: replayed, their cursor pages would land in ours.
    copyFileSync(`${theirs}-wal`, `${ours}-wal`);
    rmSync(`${ours}-shm`);
    const before = hashes(ours);
    await expect(openStore(createTestCommon(), { path: ours })).rejects.toMatchObject({ code: "KW_STORE_CORRUPT", message: expect.stringContaining("belongs to another store") });
    expect(hashes(ours)).toEqual(before);
  });

  it("is refused when it is a log of some other SQLite database", async () => {
    const ours = await crashedStore(temp.dir, "ours.db", { windows: 3 });
    const other = join(temp.dir, "other.db");
    const db = new BetterSqlite3(other);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (x)");
    for (let i = 0; i < 10; i++) db.prepare("INSERT INTO t VALUES (?)").run(i);
    copyFileSync(`${other}-wal`, `${ours}-wal`);
    db.close();
    rmSync(`${ours}-shm`);
    await expect(openStore(createTestCommon(), { path: ours })).rejects.toMatchObject({ code: "KW_STORE_CORRUPT", message: expect.stringMatching(/belongs to another store|was not written for this database/) });
  });

  it("opens the store's own log after a crash, with every commit in it", async () => {
    const ours = await crashedStore(temp.dir, "ours.db", { windows: 12 });
    const store = await openStore(createTestCommon(), { path: ours });
    try {
      expect((await store.getCursor("s1"))?.block).toBe(120);
      expect(await store.countOutbox()).toBe(12);
    } finally {
      await store.close();
    }
  });
});
