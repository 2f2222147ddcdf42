import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import type { StoreData } from "../../src/store/types.js";
import { readOnDisk } from "./fixtures/on-disk.js";
import { makeTempDir } from "./fixtures/temp-dir.js";

/**
 * store-v1.json was written by the JSON store of the release before SQLite (its own
 * openStore, commitWindow, enqueue, updateOutbox and setMeta; commit 0d0948f): the upgrade
 * must find in the database every cursor, entry (with its state, attempts, errors, digest)
 * and meta value of that file, in the same order.
 */
const FIXTURE = new URL("./fixtures/store-v1.json", import.meta.url).pathname;
const v1 = JSON.parse(readFileSync(FIXTURE, "utf8")) as StoreData;

let temp: ReturnType<typeof makeTempDir>;
let path: string;
beforeEach(() => {
  temp = makeTempDir();
  path = join(temp.dir, "kaiawatch.json");
  copyFileSync(FIXTURE, path);
});
afterEach(() => temp.remove());

describe("upgrading a JSON store of the previous release", () => {
  it("imports every cursor, outbox entry and meta value, keeps the JSON as a backup, and opens as SQLite from then on", async () => {
    expect(v1.schema_version).toBe(1);
    expect(v1.outbox.length).toBeGreaterThanOrEqual(6);
    const store = await openStore(createTestCommon(), { path });
    expect((await store.listCursors()).sort((a, b) => a.key.localeCompare(b.key))).toEqual(Object.values(v1.cursors).sort((a, b) => a.key.localeCompare(b.key)));
    expect((await store.listOutbox())).toEqual(v1.outbox);
    // The cooldown book of one meta value becomes one row per stamp (this early one has none in the current form).
    for (const [key, value] of Object.entries(v1.meta)) expect(await store.getMeta(key)).toEqual(key === "notify.cooldown" ? undefined : value);
    // The states were carried: the indexes and counts agree with the entries.
    for (const state of ["pending", "delivered", "dead"] as const) {
      expect((await store.listOutbox({ state })).map((e) => e.id)).toEqual(v1.outbox.filter((e) => e.state === state).map((e) => e.id));
      expect((await store.countOutbox({ state }))).toBe(v1.outbox.filter((e) => e.state === state).length);
    }
    // Dedup works across the upgrade: a re-scan of an upgraded alert adds nothing.
    const first = v1.outbox[0]!;
    expect(await store.enqueue([first])).toEqual({ added: 0 });
    await store.close();

    expect(readFileSync(path).subarray(0, 15).toString()).toBe("SQLite format 3");
    expect(readFileSync(`${path}.v1.json.bak`, "utf8")).toBe(readFileSync(FIXTURE, "utf8"));
    expect(existsSync(`${path}.new`)).toBe(false);
    const disk = readOnDisk(path);
    expect(disk.version).toBe(2);
    expect(disk.outbox).toEqual(v1.outbox);

    const again = await openStore(createTestCommon(), { path });
    expect((await again.listOutbox())).toEqual(v1.outbox);
    await again.close();
  });

  it("reads a JSON store read-only without upgrading it (the CLI beside a daemon that has not started yet)", async () => {
    const store = await openStore(createTestCommon(), { path, readOnly: true });
    expect((await store.listOutbox({ state: "pending" })).map((e) => e.id)).toEqual(v1.outbox.filter((e) => e.state === "pending").map((e) => e.id));
    expect((await store.getCursor("nft:0xabc"))?.block).toBe(1200);
    await store.close();
    expect(readFileSync(path, "utf8")).toBe(readFileSync(FIXTURE, "utf8"));
  });

  it("starts over after a crash in the middle: a half-built database beside the file is discarded", async () => {
    // What a kill during the upgrade leaves: the JSON in place, a partial database and a backup.
    writeFileSync(`${path}.new`, "SQLite format 3\u0000 torn");
    writeFileSync(`${path}.new-journal`, "torn");
    copyFileSync(FIXTURE, `${path}.v1.json.bak`);
    const store = await openStore(createTestCommon(), { path });
    expect((await store.listOutbox())).toEqual(v1.outbox);
    await store.close();
    expect(existsSync(`${path}.new`)).toBe(false);
  });
});
