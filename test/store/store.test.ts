import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { setImmediate as nextTick } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/types.js";
import { readOnDisk, type OnDisk } from "./fixtures/on-disk.js";
import { cursor, entry } from "./fixtures/sample.js";
import { makeTempDir } from "./fixtures/temp-dir.js";
import { SQLITE_SCHEMA_VERSION } from "../../src/store/sqlite-schema.js";

let temp: ReturnType<typeof makeTempDir>;
let path: string;
const open: Store[] = [];

beforeEach(() => {
  temp = makeTempDir();
  path = join(temp.dir, "data", "kaiawatch.json");
});
afterEach(async () => {
  for (const store of open.splice(0)) await store.close().catch(() => undefined);
  temp.remove();
});

async function openTracked(options: { readOnly?: boolean } = {}, common = createTestCommon()) {
  const store = await openStore(common, { path, ...options });
  open.push(store);
  return store;
}

function onDisk(): OnDisk {
  return readOnDisk(path);
}

describe("store round trips", () => {
  it("starts empty on a missing file, creating it and its directory at the schema version of this code", async () => {
    const store = await openTracked();
    expect((await store.listCursors())).toEqual([]);
    expect((await store.listOutbox())).toEqual([]);
    expect(onDisk()).toEqual({ version: SQLITE_SCHEMA_VERSION, cursors: {}, outbox: [], meta: {} });
  });

  it("sets the store metrics on each write", async () => {
    const common = createTestCommon();
    const store = await openTracked({}, common);
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack", { padding: 5000 })] });
    const size = (await common.metrics.storeSize.get()).values[0]?.value;
    const onDiskBytes = statSync(path).size + statSync(`${path}-wal`).size;
    expect(size).toBe(onDiskBytes);
    expect((await store.stats()).bytes).toBe(onDiskBytes);
    const histogram = await common.metrics.storeWriteDuration.get();
    const count = histogram.values.find((v) => v.metricName === "kaiawatch_store_write_duration_seconds_count")?.value;
    expect(count).toBe((await store.stats()).writes);
  });
});

describe("group commit", () => {
  it("writes 100 concurrent windows in one file write, and every caller sees its window on disk", async () => {
    const store = await openTracked();
    const before = (await store.stats()).writes;
    const calls = Array.from({ length: 100 }, (_, i) =>
      store.commitWindow({ cursor: cursor(`s${i}`, i), entries: [entry(`a${i}`, "slack")] }).then((result) => {
        // Resolved means durable: the file must already hold this caller's window.
        const data = onDisk();
        expect(data.cursors[`s${i}`]?.block).toBe(i);
        expect(data.outbox.some((e) => e.id === `a${i}:slack`)).toBe(true);
        return result.added;
      }),
    );
    expect(await Promise.all(calls)).toEqual(Array(100).fill(1));
    expect((await store.stats()).writes - before).toBe(1);
    expect(onDisk().outbox).toHaveLength(100);
  });

  it("puts mutations made while a write is in flight into the next write", async () => {
    const store = await openTracked();
    const before = (await store.stats()).writes;
    let firstDone = false;
    const checks: Promise<void>[] = [];
    const commit = (i: number) =>
      store.commitWindow({ cursor: cursor("s", i), entries: [entry(`a${i}`, "slack", { padding: 2_000 })] }).then(() => {
        const data = onDisk();
        expect(data.outbox.some((e) => e.id === `a${i}:slack`)).toBe(true);
        expect(data.cursors.s?.block).toBeGreaterThanOrEqual(i);
      });
    checks.push(commit(0).finally(() => void (firstDone = true)));
    let i = 1;
    // Bounded: each caller re-reads the file, and a slow disk must not make that quadratic.
    while (!firstDone && i < 40) {
      await nextTick();
      checks.push(commit(i++));
    }
    await Promise.all(checks);
    const commits = i;
    expect(commits).toBeGreaterThan(1); // some commits did arrive during the first write
    const writes = (await store.stats()).writes - before;
    expect(writes).toBeGreaterThanOrEqual(2);
    expect(writes).toBeLessThanOrEqual(commits);
    expect(onDisk().outbox).toHaveLength(commits);
  });

  it("flush resolves once everything mutated so far is on disk", async () => {
    const store = await openTracked();
    void store.setCursor(cursor("s1", 3));
    void store.setMeta("m", 1);
    await store.flush();
    expect(onDisk().cursors.s1?.block).toBe(3);
    expect(onDisk().meta.m).toBe(1);
    const writes = (await store.stats()).writes;
    await store.flush(); // nothing new: no write
    expect((await store.stats()).writes).toBe(writes);
  });
});

describe("outbox", () => {
  const t0 = "2025-01-01T00:00:00.000Z";
  const t1 = "2025-01-01T00:05:00.000Z";
  const t2 = "2025-01-01T00:10:00.000Z";

  async function seeded() {
    const store = await openTracked();
    await store.commitWindow({
      cursor: cursor("s1", 1),
      entries: [entry("a1", "slack"), entry("a1", "email"), entry("a2", "slack"), entry("a3", "slack")],
    });
    return store;
  }

  it("prunes delivered entries older than the limit and nothing else", async () => {
    const store = await seeded();
    await store.updateOutbox([
      { id: "a1:slack", kind: "delivered", at: t0 },
      { id: "a2:slack", kind: "delivered", at: t2 },
      { id: "a3:slack", kind: "dead", at: t0, reason: "x" },
    ]);
    expect(await store.pruneDelivered(t1)).toBe(1);
    expect((await store.listOutbox()).map((e) => e.id)).toEqual(["a1:email", "a2:slack", "a3:slack"]);
    expect(onDisk().outbox.map((e) => e.id)).toEqual(["a1:email", "a2:slack", "a3:slack"]);
    expect(await store.pruneDelivered(t1)).toBe(0);
    // A pruned alert re-scanned later is new again: pruning is for alerts well past any rewind.
    expect(await store.commitWindow({ cursor: cursor("s1", 2), entries: [entry("a1", "slack")] })).toEqual({ added: 1 });
  });
});

describe("read-only and closed stores", () => {
  it("reads while another store holds the lock, and refuses changes", async () => {
    const writer = await openTracked();
    await writer.commitWindow({ cursor: cursor("s1", 7), entries: [entry("a1", "slack")] });
    const reader = await openTracked({ readOnly: true });
    expect(reader.readOnly).toBe(true);
    expect((await reader.getCursor("s1"))?.block).toBe(7);
    expect((await reader.listOutbox({ state: "pending" }))).toHaveLength(1);
    await expect(reader.setCursor(cursor("s1", 8))).rejects.toMatchObject({ code: "KW_STORE_READ_ONLY" });
    await reader.close();
    expect(existsSync(`${path}.lock`)).toBe(true); // the writer's lock is untouched
  });

  it("opens a missing file read-only as empty without creating it", async () => {
    const reader = await openTracked({ readOnly: true });
    expect((await reader.listCursors())).toEqual([]);
    expect(existsSync(path)).toBe(false);
  });

  it("refuses changes after close and releases the lock", async () => {
    const store = await openTracked();
    await store.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
    await expect(store.setMeta("k", 1)).rejects.toMatchObject({ code: "KW_STORE_CLOSED" });
  });
});

describe("checkpoints", () => {
  it("keep the WAL bounded over many commits, and every commit readable after a reopen", async () => {
    const store = await openTracked();
    for (let i = 0; i < 1_000; i++) await store.commitWindow({ cursor: cursor("s1", i), entries: [entry(`a${i}`, "slack", { padding: 200 })] });
    // A commit here appends about five pages to the WAL (page 1, which carries the store's
    // identity at every commit, the cursor, the alert, its outbox row and index); without
    // checkpoints 1,000 of them would take 20 MB. The thread copies them every 200 commits;
    // where it has not kept up (on a busy machine it may not have started by commit 800) the
    // store copies them itself at 800, waiting for the thread's checkpoint if one is under
    // way. After either, SQLite starts the WAL over: the bound holds however slow the thread.
    expect(statSync(`${path}-wal`).size).toBeLessThan(900 * 5 * 4096);
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const again = await openTracked({ readOnly: true });
    expect((await again.countOutbox())).toBe(1_000);
    expect((await again.getCursor("s1"))?.block).toBe(999);
  }, 60_000);
});
