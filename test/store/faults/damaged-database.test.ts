import { openSync, statSync, truncateSync, writeSync, closeSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { openStore } from "../../../src/store/open-store.js";
import { inspectStoreFiles } from "../../../src/store/store-files.js";
import { currentConditions, READINESS_CHECK_OF } from "../../../src/daemon/operational-checks.js";
import { cursor, entry } from "../fixtures/sample.js";
import { storeFilePerTest } from "../fixtures/store-file.js";
import { closedStore, hashes } from "./files.js";
import { garbage } from "../fixtures/garbage.js";

const file = storeFilePerTest({ file: "kaiawatch.db" });

const PAGE = 4096;

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

describe("a damaged database at open", () => {
  it("refuses a database cut to half its size, and leaves it as found", async () => {
    await closedStore(file.path, 300);
    truncateSync(file.path, Math.floor(statSync(file.path).size / PAGE / 2) * PAGE);
    const before = hashes(file.path);
    await expect(openStore(createTestCommon(), { path: file.path })).rejects.toMatchObject({ code: "KW_STORE_CORRUPT", message: expect.stringContaining("cut short") });
    expect(hashes(file.path)).toEqual(before);
  });

  it("refuses garbage in the last pages (found by the tail check whatever the size), and leaves it as found", async () => {
    await closedStore(file.path, 300);
    const size = statSync(file.path).size;
    overwrite(file.path, size - 3 * PAGE, garbage(3 * PAGE));
    // The structural check of store-files.ts alone (what a store too large for quick_check gets).
    expect(inspectStoreFiles(file.path).problem).toMatch(/page \d+ of \d+ is neither a b-tree page/);
    const before = hashes(file.path);
    await expect(openStore(createTestCommon(), { path: file.path })).rejects.toMatchObject({ code: "KW_STORE_CORRUPT" });
    expect(hashes(file.path)).toEqual(before);
  });

  it("refuses zeroed last pages", async () => {
    await closedStore(file.path, 300);
    overwrite(file.path, statSync(file.path).size - 2 * PAGE, Buffer.alloc(2 * PAGE));
    await expect(openStore(createTestCommon(), { path: file.path })).rejects.toMatchObject({ code: "KW_STORE_CORRUPT" });
  });

  it("opens a whole store: the checks find nothing wrong in a healthy one", async () => {
    await closedStore(file.path, 300);
    expect(inspectStoreFiles(file.path).problem).toBeUndefined();
    const store = await openStore(createTestCommon(), { path: file.path });
    file.track(store);
    expect(await store.countOutbox()).toBe(300);
  });
});

describe("damage found while running", () => {
  it("turns SQLite's malformed-database error into KW_STORE_CORRUPT, stops writes, and says so in stats and conditions", async () => {
    await closedStore(file.path, 300);
    const store = await openStore(createTestCommon(), { path: file.path });
    file.track(store);
    // A commit in the WAL: closing the store as usual would checkpoint it into the damaged file.
    await store.setCursor(cursor("s2", 5));
    expect(statSync(`${file.path}-wal`).size).toBeGreaterThan(0);
    // Damage under the running store: the outbox's pages in the middle of the file (not read yet).
    const size = statSync(file.path).size;
    overwrite(file.path, Math.floor(size / PAGE / 2) * PAGE, garbage(4 * PAGE, 7));
    const error = await store.listOutbox().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "KW_STORE_CORRUPT", message: expect.stringContaining("stopped writing") });
    // Writes stop, with the same error: no tick error repeated as SQLite's raw text.
    await expect(store.commitWindow({ cursor: cursor("s1", 1_000), entries: [entry("late", "slack")] })).rejects.toMatchObject({ code: "KW_STORE_CORRUPT" });
    await expect(store.setMeta("k", 1)).rejects.toMatchObject({ code: "KW_STORE_CORRUPT" });
    await expect(store.flush()).rejects.toMatchObject({ code: "KW_STORE_CORRUPT" });
    expect(store.writeFailing()).toBe(true);
    const stats = await store.stats();
    expect(stats.lastWriteFailed).toBe(true);
    expect(stats.corrupt).toContain("is damaged");

    // The operational alert: store_corrupt, which makes /readyz's store check fail.
    const conditions = currentConditions(
      { source_behind_blocks: 1_000, sink_pending_age: 60_000 } as never,
      { nowMs: 0, sources: [], lastErrors: new Map(), sinks: [], deadLetters: 0, store: stats, storePath: file.path, budget: { budget: null, spent_today: 0, paused_until: null, quota: null } },
    );
    expect(conditions.map((c) => c.kind)).toEqual(["store_corrupt"]);
    expect(READINESS_CHECK_OF.get("store_corrupt")).toBe("store");

    // Closing writes nothing into the damaged file: the WAL is not checkpointed into it.
    const before = hashes(file.path);
    await store.close();
    expect(hashes(file.path)).toMatchObject({ db: before.db, "-wal": before["-wal"] });
  });
});
