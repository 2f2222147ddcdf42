import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import { SQLITE_SCHEMA_VERSION } from "../../src/store/sqlite-schema.js";
import { readOnDisk } from "./fixtures/on-disk.js";
import { CAN_MOUNT_TMPFS, fillFileSystem } from "../helpers/tmpfs.js";
import { cursor, entry } from "./fixtures/sample.js";
import { storeFilePerTest } from "./fixtures/store-file.js";

const mounts: string[] = [];
const file = storeFilePerTest({
  beforeRemove: () => {
    for (const dir of mounts.splice(0)) execFileSync("umount", [dir], { stdio: "ignore" });
  },
});

/** A tmpfs of `size` in the test's directory; only where mounting is allowed (root, CAP_SYS_ADMIN). */
function mountTmpfs(size: string): string {
  const dir = join(file.dir, `tmpfs-${mounts.length}`);
  mkdirSync(dir);
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "ignore" });
  mounts.push(dir);
  return dir;
}



async function openFails() {
  const error = await file.open().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error === undefined) throw new Error("the store opened");
  return error as Error & { code: string };
}

describe("a corrupt or foreign file stops start-up and is never overwritten", () => {
  it("an empty file (0 bytes): KW_STORE_CORRUPT, never a new empty store", async () => {
    writeFileSync(file.path, "");
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_CORRUPT");
    expect(error.message).toContain("the file is empty (0 bytes)");
    expect(readFileSync(file.path, "utf8")).toBe("");
    expect(existsSync(`${file.path}.lock`)).toBe(false);
  });

  it.each([
    ["a truncated JSON file", '{"schema_version":1,"cursors":{"s1":{"key":"s1","blo'],
    ["a file holding null", "null"],
    ["a file holding a number", "42"],
    ["a binary file that is not SQLite", "\u0000\u0001\u0002garbage"],
    ["a JSON array", "[]"],
    ["no schema_version", '{"cursors":{},"outbox":[],"meta":{}}'],
    ["a malformed outbox", '{"schema_version":1,"cursors":{},"outbox":[{"id":1}],"meta":{}}'],
  ])("%s: KW_STORE_CORRUPT, file unchanged", async (_name, text) => {
    writeFileSync(file.path, text);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_CORRUPT");
    expect(error.message).toContain("not a kaiawatch store");
    expect(readFileSync(file.path, "utf8")).toBe(text);
    expect(existsSync(`${file.path}.lock`)).toBe(false); // the lock is released again
  });
});

describe("an SQLite file that is not a kaiawatch store", () => {
  it("an SQLite database without kaiawatch's tables: KW_STORE_CORRUPT, file unchanged", async () => {
    const db = new BetterSqlite3(file.path);
    db.exec("CREATE TABLE something_else (x)");
    db.close();
    const before = readFileSync(file.path);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_CORRUPT");
    expect(error.message).toContain("without kaiawatch's tables");
    expect(readFileSync(file.path).equals(before)).toBe(true);
  });

  it("a store of a newer kaiawatch: KW_STORE_VERSION", async () => {
    const store = await file.open();
    await store.close();
    const db = new BetterSqlite3(file.path);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    db.close();
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_VERSION");
    expect(error.message).toMatch(new RegExp(`schema version ${SQLITE_SCHEMA_VERSION + 1}.*knows up to ${SQLITE_SCHEMA_VERSION}`));
  });

  it("a store of a development build before the first release (version 2): KW_STORE_VERSION, file unchanged", async () => {
    const db = new BetterSqlite3(file.path);
    db.exec("CREATE TABLE cursors (key TEXT PRIMARY KEY, block INTEGER NOT NULL, cursor TEXT NOT NULL) WITHOUT ROWID; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID");
    db.pragma("user_version = 2");
    db.close();
    const before = readFileSync(file.path);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_VERSION");
    expect(error.message).toMatch(/schema version 2, written by a development build.*Move it away/);
    expect(readFileSync(file.path).equals(before)).toBe(true);
  });

  it("a damaged SQLite header: KW_STORE_CORRUPT, file unchanged", async () => {
    const store = await file.open();
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
    await store.close();
    const bytes = readFileSync(file.path);
    bytes.fill(0xff, 20, 100); // the header after the magic string: page size, counters, schema cookie
    writeFileSync(file.path, bytes);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_CORRUPT");
    expect(readFileSync(file.path).equals(bytes)).toBe(true);
  });

  it("a WAL left without its database: KW_STORE_CORRUPT rather than replaying it into a new store", async () => {
    writeFileSync(`${file.path}-wal`, "x");
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_CORRUPT");
    expect(existsSync(file.path)).toBe(false);
  });
});

describe("cursors", () => {
  it("refuses a negative cursor below -1 or a fraction, in setCursor and commitWindow", async () => {
    const store = await file.open();
    await expect(store.setCursor(cursor("s1", -5))).rejects.toThrow(/whole number ≥ -1/);
    await expect(store.setCursor(cursor("s1", 1.5))).rejects.toThrow(/whole number ≥ -1/);
    await expect(store.commitWindow({ cursor: cursor("s1", -2), entries: [entry("a1", "slack")] })).rejects.toThrow(/whole number ≥ -1/);
    await store.setCursor(cursor("s1", -1)); // a source starting at block 0
    expect((await store.getCursor("s1"))?.block).toBe(-1);
    expect((await store.listOutbox())).toEqual([]);
  });

  it("refuses a JSON store holding a negative cursor instead of upgrading it", async () => {
    const text = JSON.stringify({ schema_version: 1, cursors: { s1: { ...cursor("s1", -5) } }, outbox: [], meta: {} });
    writeFileSync(file.path, text);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_CORRUPT");
    expect(readFileSync(file.path, "utf8")).toBe(text);
  });
});

describe("a failed write", () => {
  // A full disk is the failure SQLite meets in practice: a tiny tmpfs, filled up (needs root).
  it.skipIf(!CAN_MOUNT_TMPFS)("rejects its callers with KW_STORE_WRITE_FAILED, undoes their changes, keeps the last commit, and writes again once there is room", async () => {
    const dir = mountTmpfs("2m");
    const path = join(dir, "kaiawatch.db");
    const store = file.track(await openStore(createTestCommon(), { path }));
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
    fillFileSystem(join(dir, "filler"));
    const results = await Promise.allSettled([
      store.commitWindow({ cursor: cursor("s1", 2), entries: [entry("a2", "slack", { padding: 200_000 })] }),
      store.setMeta("m", "x".repeat(50_000)),
    ]);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "KW_STORE_WRITE_FAILED" });
    }
    expect(await store.stats()).toMatchObject({ lastWriteFailed: true });
    expect((await store.stats()).failedWrites).toBeGreaterThanOrEqual(1);
    // Undone, in memory too: the callers were told, and the poller scans the window again.
    expect((await store.getCursor("s1"))?.block).toBe(1);
    expect((await store.getMeta("m"))).toBeUndefined();
    expect((await store.listOutbox()).map((e) => e.id)).toEqual(["a1:slack"]);
    expect(readOnDisk(path).outbox.map((e) => e.id)).toEqual(["a1:slack"]);

    rmSync(join(dir, "filler"));
    // flush tries the disk again even without a change, and clears the failure.
    await store.flush();
    expect((await store.stats()).lastWriteFailed).toBe(false);
    await store.commitWindow({ cursor: cursor("s1", 3), entries: [entry("a3", "slack")] });
    const data = readOnDisk(path);
    expect(data.cursors.s1?.block).toBe(3);
    expect(data.outbox.map((e) => e.id)).toEqual(["a1:slack", "a3:slack"]);
  });

  it("of a new store fails start-up instead of the first alert", async () => {
    // A directory where the new database is built: open(2) fails even for root.
    mkdirSync(`${file.path}.new`);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_WRITE_FAILED");
    expect(existsSync(file.path)).toBe(false);
    expect(existsSync(`${file.path}.lock`)).toBe(false);
  });
});
