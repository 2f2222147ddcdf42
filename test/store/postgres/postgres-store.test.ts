import { beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { cursor, entry } from "../fixtures/sample.js";
import { usePostgres } from "./pg-fixtures.js";

const pg = usePostgres();
let url: string;
beforeEach(async () => {
  url = await pg.database();
});


describe("PostgreSQL store round trips", () => {
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
