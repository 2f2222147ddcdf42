import { readFileSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { setImmediate as nextTick } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/types.js";
import { readOnDisk, type OnDisk } from "./fixtures/on-disk.js";
import { cursor, entry } from "./fixtures/sample.js";
import { makeTempDir } from "./fixtures/temp-dir.js";

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
  it("starts empty on a missing file, creating it and its directory at schema version 2", async () => {
    const store = await openTracked();
    expect((await store.listCursors())).toEqual([]);
    expect((await store.listOutbox())).toEqual([]);
    expect(onDisk()).toEqual({ version: 2, cursors: {}, outbox: [], meta: {} });
  });

  it("reads back cursors, outbox entries and meta after a reopen", async () => {
    const store = await openTracked();
    await store.commitWindow({ cursor: cursor("s1", 10), entries: [entry("a1", "slack"), entry("a1", "email")] });
    await store.setCursor(cursor("s2", 5));
    await store.setMeta("recent", { keys: ["x", "y"] });
    await store.close();

    const again = await openTracked();
    expect((await again.getCursor("s1"))).toEqual(cursor("s1", 10));
    expect((await again.listCursors()).map((c) => c.key).sort()).toEqual(["s1", "s2"]);
    expect((await again.listOutbox()).map((e) => e.id)).toEqual(["a1:slack", "a1:email"]);
    expect((await again.listOutbox())[0]?.alert).toEqual(entry("a1", "slack").alert);
    expect((await again.getMeta("recent"))).toEqual({ keys: ["x", "y"] });
    expect((await again.getMeta("missing"))).toBeUndefined();
  });

  it("stores a copy of meta values and removes a key set to undefined", async () => {
    const store = await openTracked();
    const value = { n: 1 };
    await store.setMeta("k", value);
    value.n = 2;
    expect((await store.getMeta("k"))).toEqual({ n: 1 });
    await store.setMeta("k", undefined);
    expect((await store.getMeta("k"))).toBeUndefined();
    expect(onDisk().meta).toEqual({});
  });

  it("hands out copies: changing a returned cursor or entry changes nothing stored", async () => {
    const store = await openTracked();
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
    const c = await store.getCursor("s1");
    const [e] = await store.listOutbox();
    if (c === undefined || e === undefined) throw new Error("missing");
    c.block = 999;
    e.state = "dead";
    expect((await store.getCursor("s1"))?.block).toBe(1);
    expect((await store.listOutbox())[0]?.state).toBe("pending");
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

describe("commitWindow", () => {
  it("does not add an entry twice when a window is committed again (re-scan after rewind or crash)", async () => {
    const store = await openTracked();
    const entries = [entry("a1", "slack"), entry("a2", "slack")];
    expect(await store.commitWindow({ cursor: cursor("s1", 10), entries })).toEqual({ added: 2 });
    await store.updateOutbox([{ id: "a1:slack", kind: "delivered", at: "2025-01-01T00:01:00.000Z" }]);
    await store.setCursor(cursor("s1", 5)); // rewind
    expect(await store.commitWindow({ cursor: cursor("s1", 10), entries: [...entries, entry("a3", "slack")] })).toEqual({ added: 1 });
    expect((await store.listOutbox()).map((e) => [e.id, e.state])).toEqual([
      ["a1:slack", "delivered"],
      ["a2:slack", "pending"],
      ["a3:slack", "pending"],
    ]);
    expect(onDisk().outbox).toHaveLength(3);
  });

  it("adds an id repeated within one window once", async () => {
    const store = await openTracked();
    expect(await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack"), entry("a1", "slack")] })).toEqual({ added: 1 });
  });

  it("refuses to move a cursor backwards and changes nothing", async () => {
    const store = await openTracked();
    await store.commitWindow({ cursor: cursor("s1", 10), entries: [] });
    await expect(store.commitWindow({ cursor: cursor("s1", 9), entries: [entry("a1", "slack")] })).rejects.toMatchObject({ code: "KW_STORE_CURSOR_BACKWARDS" });
    expect((await store.getCursor("s1"))?.block).toBe(10);
    expect((await store.listOutbox())).toEqual([]);
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

  it("lists by sink, state and due time, oldest first", async () => {
    const store = await seeded();
    expect((await store.listOutbox({ sink: "slack", state: "pending" })).map((e) => e.id)).toEqual(["a1:slack", "a2:slack", "a3:slack"]);
    expect((await store.listOutbox({ sink: "email" })).map((e) => e.id)).toEqual(["a1:email"]);
    await store.updateOutbox([{ id: "a2:slack", kind: "failed", at: t0, error: "HTTP 500", next_attempt_at: t2 }]);
    expect((await store.listOutbox({ state: "pending", dueBefore: t1 })).map((e) => e.id)).toEqual(["a1:slack", "a1:email", "a3:slack"]);
    expect((await store.listOutbox({ state: "pending", dueBefore: t2 })).map((e) => e.id)).toEqual(["a1:slack", "a1:email", "a2:slack", "a3:slack"]);
    expect((await store.listOutbox({ sink: "nobody", state: "pending" }))).toEqual([]);
  });

  it("records failures, deliveries, dead letters, requeues and groups, and keeps them across a reopen", async () => {
    const store = await seeded();
    const before = (await store.stats()).writes;
    await store.updateOutbox([
      { id: "a1:slack", kind: "group", group_id: "g1" },
      { id: "a2:slack", kind: "group", group_id: "g1" },
      { id: "a1:slack", kind: "failed", at: t0, error: "HTTP 503", next_attempt_at: t1 },
      { id: "a1:slack", kind: "delivered", at: t1 },
      { id: "a2:slack", kind: "dead", at: t1, reason: "HTTP 404" },
      { id: "a3:slack", kind: "dead", at: t1, reason: "HTTP 400" },
      { id: "a3:slack", kind: "requeue", at: t2 },
    ]);
    expect((await store.stats()).writes - before).toBe(1);
    expect(onDisk().outbox).toEqual((await store.listOutbox())); // the file holds every change
    await store.close();

    const again = await openTracked();
    const byId = new Map((await again.listOutbox()).map((e) => [e.id, e]));
    expect(byId.get("a1:slack")).toMatchObject({ state: "delivered", attempts: 2, delivered_at: t1, last_error: "HTTP 503", group_id: "g1" });
    expect(byId.get("a2:slack")).toMatchObject({ state: "dead", attempts: 1, dead_reason: "HTTP 404", group_id: "g1" });
    expect(byId.get("a3:slack")).toMatchObject({ state: "pending", attempts: 0, next_attempt_at: t2 });
    expect(byId.get("a3:slack")?.dead_reason).toBeUndefined();
    expect((await again.listOutbox({ state: "pending" })).map((e) => e.id)).toEqual(["a1:email", "a3:slack"]);
    expect((await again.listOutbox({ state: "dead" })).map((e) => e.id)).toEqual(["a2:slack"]);
    expect((await again.listOutbox({ state: "delivered", sink: "slack" })).map((e) => e.id)).toEqual(["a1:slack"]);
  });

  it("keeps the pending list in order of addition after a requeue", async () => {
    const store = await seeded();
    await store.updateOutbox([{ id: "a1:slack", kind: "dead", at: t0, reason: "x" }]);
    await store.updateOutbox([{ id: "a1:slack", kind: "requeue", at: t1 }]);
    expect((await store.listOutbox({ state: "pending", sink: "slack" })).map((e) => e.id)).toEqual(["a1:slack", "a2:slack", "a3:slack"]);
  });

  it("refuses a batch with an impossible change and applies none of it", async () => {
    const store = await seeded();
    await store.updateOutbox([{ id: "a1:slack", kind: "delivered", at: t0 }]);
    const snapshot = readFileSync(path, "utf8");
    await expect(
      store.updateOutbox([
        { id: "a2:slack", kind: "delivered", at: t1 },
        { id: "a1:slack", kind: "failed", at: t1, error: "late", next_attempt_at: t2 },
      ]),
    ).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
    await expect(store.updateOutbox([{ id: "nope:slack", kind: "delivered", at: t1 }])).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
    await expect(store.updateOutbox([{ id: "a1:slack", kind: "requeue", at: t1 }])).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
    // Two changes to one entry are checked in sequence: delivered, then failed, is refused.
    await expect(
      store.updateOutbox([
        { id: "a3:slack", kind: "delivered", at: t1 },
        { id: "a3:slack", kind: "failed", at: t1, error: "x", next_attempt_at: t2 },
      ]),
    ).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
    expect((await store.listOutbox({ state: "pending" })).map((e) => e.id)).toEqual(["a1:email", "a2:slack", "a3:slack"]);
    await store.flush();
    expect(readFileSync(path, "utf8")).toBe(snapshot);
  });

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

describe("pruning in batches", () => {
  it("removes at most `limit` of the oldest deliveries per call, and counts follow", async () => {
    const store = await openTracked();
    await store.commitWindow({ cursor: cursor("s1", 1), entries: Array.from({ length: 25 }, (_, i) => entry(`a${i}`, "slack")) });
    // Delivered in the reverse order of addition: pruning goes by delivery time, not by seq.
    await store.updateOutbox(Array.from({ length: 25 }, (_, i) => ({ id: `a${i}:slack`, kind: "delivered" as const, at: new Date(Date.UTC(2025, 0, 1, 0, 25 - i)).toISOString() })));
    const cutoff = "2025-01-01T00:21:00.000Z"; // deliveries at minutes 1..20 are older
    expect(await store.pruneDelivered(cutoff, 8)).toBe(8);
    expect((await store.listOutbox()).map((e) => e.id).slice(-3)).toEqual(["a14:slack", "a15:slack", "a16:slack"]);
    expect(await store.pruneDelivered(cutoff, 8)).toBe(8);
    expect(await store.pruneDelivered(cutoff, 8)).toBe(4);
    expect(await store.pruneDelivered(cutoff, 8)).toBe(0);
    expect((await store.countOutbox({ state: "delivered" }))).toBe(5);
    expect((await store.stats()).outbox).toBe(5);
    expect((await store.outboxCounts())).toEqual([{ sink: "slack", state: "delivered", count: 5, retrying: 5 }]);
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
    // A commit here appends a handful of pages to the WAL; without checkpoints 1,000 of them
    // would take several MB. The thread copies them every 200 commits (or the store itself
    // after 800), after which SQLite starts the WAL over.
    expect(statSync(`${path}-wal`).size).toBeLessThan(900 * 4 * 4096);
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const again = await openTracked({ readOnly: true });
    expect((await again.countOutbox())).toBe(1_000);
    expect((await again.getCursor("s1"))?.block).toBe(999);
  }, 60_000);
});
