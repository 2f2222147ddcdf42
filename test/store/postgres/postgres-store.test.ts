import { beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { cursor, entry } from "../fixtures/sample.js";
import { usePostgres } from "./pg-fixtures.js";

const pg = usePostgres();
let url: string;
beforeEach(async () => {
  url = await pg.database();
});

const t0 = "2025-01-01T00:00:00.000Z";
const t1 = "2025-01-01T00:05:00.000Z";
const t2 = "2025-01-01T00:10:00.000Z";

describe("PostgreSQL store round trips", () => {
  it("creates its schema on first open and reads back cursors, outbox entries and meta from another connection", async () => {
    const store = await pg.open(url);
    expect(await store.listCursors()).toEqual([]);
    await store.commitWindow({ cursor: cursor("s1", 10), entries: [entry("a1", "slack"), entry("a1", "email")] });
    await store.setCursor(cursor("s2", 5));
    await store.setMeta("recent", { keys: ["x", "y"] });
    await store.close();

    const again = await pg.open(url, { replicaId: "r2" });
    expect(await again.getCursor("s1")).toEqual(cursor("s1", 10));
    expect((await again.listCursors()).map((c) => c.key)).toEqual(["s1", "s2"]);
    expect((await again.listOutbox()).map((e) => e.id)).toEqual(["a1:slack", "a1:email"]);
    // Byte for byte: the alert is kept as json, so even its key order comes back.
    expect(JSON.stringify((await again.listOutbox())[0]?.alert)).toBe(JSON.stringify(entry("a1", "slack").alert));
    expect(await again.getMeta("recent")).toEqual({ keys: ["x", "y"] });
    expect(await again.getMeta("missing")).toBeUndefined();
    await again.setMeta("recent", undefined);
    expect(await again.getMeta("recent")).toBeUndefined();
  });

  it("keeps the URL out of its path and its messages, and registers it as a secret", async () => {
    const common = createTestCommon();
    const store = await pg.open(url, {}, common);
    expect(store.path).not.toContain("postgres@");
    expect(common.secrets.redact(`connecting to ${url}`)).not.toContain(url);
  });

  it("counts writes and the store's size, and times each write", async () => {
    const common = createTestCommon();
    const store = await pg.open(url, {}, common);
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
    await store.commitWindow({ cursor: cursor("s1", 2), entries: [] });
    // A quiet window's advance waits for flush(): one write for all of them.
    await store.flush();
    const stats = await store.stats();
    expect(stats).toMatchObject({ writes: 2, failedWrites: 0, lastWriteFailed: false, outbox: 1, cursors: 1 });
    expect(stats.bytes).toBeGreaterThan(0);
    const histogram = await common.metrics.storeWriteDuration.get();
    expect(histogram.values.find((v) => v.metricName === "kaiawatch_store_write_duration_seconds_count")?.value).toBe(2);
    expect((await common.metrics.alertsQueued.get()).values).toEqual([expect.objectContaining({ labels: { sink: "slack" }, value: 1 })]);
  });
});

describe("PostgreSQL commitWindow", () => {
  it("does not add an entry twice when a window is committed again (re-scan after rewind or crash)", async () => {
    const store = await pg.open(url);
    const entries = [entry("a1", "slack"), entry("a2", "slack")];
    expect(await store.commitWindow({ cursor: cursor("s1", 10), entries })).toEqual({ added: 2 });
    await store.updateOutbox([{ id: "a1:slack", kind: "delivered", at: t1 }]);
    await store.setCursor(cursor("s1", 5)); // rewind
    expect(await store.commitWindow({ cursor: cursor("s1", 10), entries: [...entries, entry("a3", "slack")] })).toEqual({ added: 1 });
    expect((await store.listOutbox()).map((e) => [e.id, e.state])).toEqual([
      ["a1:slack", "delivered"],
      ["a2:slack", "pending"],
      ["a3:slack", "pending"],
    ]);
  });

  it("adds an id repeated within one window once", async () => {
    const store = await pg.open(url);
    expect(await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack"), entry("a1", "slack")] })).toEqual({ added: 1 });
  });

  it("refuses to move a cursor backwards and changes nothing", async () => {
    const store = await pg.open(url);
    await store.commitWindow({ cursor: cursor("s1", 10), entries: [] });
    await expect(store.commitWindow({ cursor: cursor("s1", 9), entries: [entry("a1", "slack")] })).rejects.toMatchObject({ code: "KW_STORE_CURSOR_BACKWARDS" });
    expect((await store.getCursor("s1"))?.block).toBe(10);
    expect(await store.listOutbox()).toEqual([]);
    expect((await store.stats()).failedWrites).toBe(0);
  });

  it("never lets a racing commit move a new source's cursor back", async () => {
    const a = await pg.open(url, { replicaId: "r1" });
    const b = await pg.open(url, { replicaId: "r2" });
    for (let round = 0; round < 10; round++) {
      const key = `new${round}`;
      const [high, low] = await Promise.allSettled([
        a.commitWindow({ cursor: cursor(key, 5), entries: [entry(`${key}-high`, "slack")] }),
        b.commitWindow({ cursor: cursor(key, 3), entries: [entry(`${key}-low`, "slack")] }),
      ]);
      expect(high.status).toBe("fulfilled");
      expect((await a.getCursor(key))?.block).toBe(5);
      // The lower window either committed first (and was then passed) or was refused whole.
      const lowAdded = (await a.listOutbox()).some((e) => e.id === `${key}-low:slack`);
      expect(lowAdded).toBe(low.status === "fulfilled");
      if (low.status === "rejected") expect(low.reason).toMatchObject({ code: "KW_STORE_CURSOR_BACKWARDS" });
    }
  });

  it("is atomic: a window whose entries the server refuses leaves neither the cursor nor any entry", async () => {
    const store = await pg.open(url);
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [] });
    const bad = { ...entry("a2", "slack"), state: "lost" as never };
    await expect(store.commitWindow({ cursor: cursor("s1", 2), entries: [entry("a1", "slack"), bad] })).rejects.toMatchObject({ code: "KW_STORE_WRITE_FAILED" });
    expect((await store.getCursor("s1"))?.block).toBe(1);
    expect(await store.listOutbox()).toEqual([]);
    expect(await store.stats()).toMatchObject({ failedWrites: 1, lastWriteFailed: true });
    await store.commitWindow({ cursor: cursor("s1", 2), entries: [entry("a1", "slack")] });
    expect((await store.stats()).lastWriteFailed).toBe(false);
  });

  it("commits a large window in one transaction (more entries than one statement takes)", async () => {
    const store = await pg.open(url);
    const entries = Array.from({ length: 2500 }, (_, i) => entry(`a${i}`, "slack"));
    expect(await store.commitWindow({ cursor: cursor("s1", 1), entries })).toEqual({ added: 2500 });
    expect((await store.listOutbox({ limit: 3 })).map((e) => e.id)).toEqual(["a0:slack", "a1:slack", "a2:slack"]);
    expect((await store.listOutbox({ limit: 1, newestFirst: true }))[0]?.id).toBe("a2499:slack");
  });

  it("lets concurrent windows of different sources commit together, each exactly once", async () => {
    const a = await pg.open(url, { replicaId: "r1" });
    const b = await pg.open(url, { replicaId: "r2" });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).commitWindow({ cursor: cursor(`s${i}`, 5), entries: [entry(`a${i}`, "slack"), entry("shared", "slack")] })),
    );
    expect(results.reduce((sum, r) => sum + r.added, 0)).toBe(21);
    expect(await a.countOutbox()).toBe(21);
    expect(await a.listCursors()).toHaveLength(20);
  });
});

describe("PostgreSQL outbox", () => {
  async function seeded() {
    const store = await pg.open(url);
    await store.commitWindow({
      cursor: cursor("s1", 1),
      entries: [entry("a1", "slack"), entry("a1", "email"), entry("a2", "slack"), entry("a3", "slack")],
    });
    return store;
  }

  it("lists by sink, state, due time and group, oldest first", async () => {
    const store = await seeded();
    expect((await store.listOutbox({ sink: "slack", state: "pending" })).map((e) => e.id)).toEqual(["a1:slack", "a2:slack", "a3:slack"]);
    expect((await store.listOutbox({ sink: "email" })).map((e) => e.id)).toEqual(["a1:email"]);
    await store.updateOutbox([{ id: "a2:slack", kind: "failed", at: t0, error: "HTTP 500", next_attempt_at: t2 }]);
    expect((await store.listOutbox({ state: "pending", dueBefore: t1 })).map((e) => e.id)).toEqual(["a1:slack", "a1:email", "a3:slack"]);
    expect((await store.listOutbox({ state: "pending", dueBefore: t2 })).map((e) => e.id)).toEqual(["a1:slack", "a1:email", "a2:slack", "a3:slack"]);
    expect(await store.listOutbox({ sink: "nobody", state: "pending" })).toEqual([]);
    expect(await store.nextAttemptAfter("slack", t1)).toBe(t2);
    expect(await store.nextAttemptAfter("slack", t2)).toBeUndefined();
    await store.updateOutbox([{ id: "a3:slack", kind: "group", group_id: "g1" }]);
    expect((await store.listOutbox({ groupId: "g1" })).map((e) => e.id)).toEqual(["a3:slack"]);
  });

  it("records failures, deliveries, dead letters, requeues and groups in one write", async () => {
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
    const byId = new Map((await store.listOutbox()).map((e) => [e.id, e]));
    expect(byId.get("a1:slack")).toMatchObject({ state: "delivered", attempts: 2, delivered_at: t1, last_error: "HTTP 503", group_id: "g1" });
    expect(byId.get("a2:slack")).toMatchObject({ state: "dead", attempts: 1, dead_reason: "HTTP 404", group_id: "g1" });
    expect(byId.get("a3:slack")).toMatchObject({ state: "pending", attempts: 0, next_attempt_at: t2 });
    expect(byId.get("a3:slack")?.dead_reason).toBeUndefined();
    expect(byId.get("a3:slack")?.group_id).toBeUndefined();
    expect(await store.countOutbox({ state: "pending" })).toBe(2);
    expect(await store.countOutbox({ sink: "slack", state: "delivered", retrying: true })).toBe(1);
    expect(await store.outboxCounts()).toEqual([
      { sink: "email", state: "pending", count: 1, retrying: 0 },
      { sink: "slack", state: "dead", count: 1, retrying: 1 },
      { sink: "slack", state: "delivered", count: 1, retrying: 1 },
      { sink: "slack", state: "pending", count: 1, retrying: 0 },
    ]);
  });

  it("keeps the pending list in order of addition after a requeue", async () => {
    const store = await seeded();
    await store.updateOutbox([{ id: "a1:slack", kind: "dead", at: t0, reason: "x" }]);
    await store.updateOutbox([{ id: "a1:slack", kind: "requeue", at: t1 }], { durable: false });
    expect((await store.listOutbox({ state: "pending", sink: "slack" })).map((e) => e.id)).toEqual(["a1:slack", "a2:slack", "a3:slack"]);
  });

  it("refuses a batch with an impossible change and applies none of it", async () => {
    const store = await seeded();
    await store.updateOutbox([{ id: "a1:slack", kind: "delivered", at: t0 }]);
    const snapshot = await store.listOutbox();
    await expect(
      store.updateOutbox([
        { id: "a2:slack", kind: "delivered", at: t1 },
        { id: "a1:slack", kind: "failed", at: t1, error: "late", next_attempt_at: t2 },
      ]),
    ).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
    await expect(store.updateOutbox([{ id: "nope:slack", kind: "delivered", at: t1 }])).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
    await expect(store.updateOutbox([{ id: "a1:slack", kind: "requeue", at: t1 }])).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
    await expect(
      store.updateOutbox([
        { id: "a3:slack", kind: "delivered", at: t1 },
        { id: "a3:slack", kind: "failed", at: t1, error: "x", next_attempt_at: t2 },
      ]),
    ).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
    expect(await store.listOutbox()).toEqual(snapshot);
    expect((await store.stats()).failedWrites).toBe(0);
  });

  it("prunes the oldest deliveries in batches, by delivery time", async () => {
    const store = await pg.open(url);
    await store.commitWindow({ cursor: cursor("s1", 1), entries: Array.from({ length: 25 }, (_, i) => entry(`a${i}`, "slack")) });
    await store.updateOutbox(Array.from({ length: 25 }, (_, i) => ({ id: `a${i}:slack`, kind: "delivered" as const, at: new Date(Date.UTC(2025, 0, 1, 0, 25 - i)).toISOString() })));
    const cutoff = "2025-01-01T00:21:00.000Z";
    expect(await store.pruneDelivered(cutoff, 8)).toBe(8);
    expect((await store.listOutbox()).map((e) => e.id).slice(-3)).toEqual(["a14:slack", "a15:slack", "a16:slack"]);
    expect(await store.pruneDelivered(cutoff)).toBe(12);
    expect(await store.pruneDelivered(cutoff)).toBe(0);
    expect(await store.outboxCounts()).toEqual([{ sink: "slack", state: "delivered", count: 5, retrying: 5 }]);
    // A pruned alert re-scanned later is new again.
    expect(await store.commitWindow({ cursor: cursor("s1", 2), entries: [entry("a24", "slack")] })).toEqual({ added: 1 });
  });
});

describe("PostgreSQL read-only and closed stores", () => {
  it("reads when opened read-only and refuses changes; refuses everything after close", async () => {
    const writer = await pg.open(url);
    await writer.setCursor(cursor("s1", 3));
    const reader = await pg.open(url, { readOnly: true });
    expect((await reader.getCursor("s1"))?.block).toBe(3);
    await expect(reader.setCursor(cursor("s1", 4))).rejects.toMatchObject({ code: "KW_STORE_READ_ONLY" });
    await writer.close();
    await expect(writer.setCursor(cursor("s1", 4))).rejects.toMatchObject({ code: "KW_STORE_CLOSED" });
    await expect(writer.getCursor("s1")).rejects.toMatchObject({ code: "KW_STORE_CLOSED" });
    await writer.flush();
  });
});

describe("PostgreSQL outage", () => {
  it("fails writes with KW_STORE_WRITE_FAILED and reads with KW_STORE_UNREACHABLE while the server is down, and works again after", async () => {
    const store = await pg.open(url);
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
    expect(await store.stats()).toMatchObject({ outbox: 1, cursors: 1 });
    await pg.server().stop();
    try {
      await expect(store.commitWindow({ cursor: cursor("s1", 2), entries: [entry("a2", "slack")] })).rejects.toMatchObject({ code: "KW_STORE_WRITE_FAILED" });
      await expect(store.getCursor("s1")).rejects.toMatchObject({ code: "KW_STORE_UNREACHABLE" });
      // stats() answers without the server (the status page reads it to say the store is down).
      expect(await store.stats()).toMatchObject({ failedWrites: 1, lastWriteFailed: true, outbox: 1, cursors: 1 });
    } finally {
      await pg.server().restart();
    }
    await store.commitWindow({ cursor: cursor("s1", 2), entries: [entry("a2", "slack")] });
    expect((await store.listOutbox()).map((e) => e.id)).toEqual(["a1:slack", "a2:slack"]);
    expect((await store.stats()).lastWriteFailed).toBe(false);
  });
});
