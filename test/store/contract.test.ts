import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestCommon, type Common } from "../../src/common/common.js";
import { parseMatchers } from "../../src/notify/matchers.js";
import { newSilence } from "../../src/notify/silences.js";
import type { Backend } from "../../src/store/backend.js";
import type { AbsenceState, Witness, WitnessRole } from "../../src/store/types.js";
import { openBackend, type OpenBackendOptions } from "../../src/store/open-backend.js";
import { metaSlot, readMeta, writeMeta } from "../../src/store/meta-slot.js";
import { leaseResource } from "../../src/store/resources.js";
import { z } from "zod";
import { createTestDatabase, startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { cursor, entry } from "./fixtures/sample.js";
import { makeTempDir } from "./fixtures/temp-dir.js";

/**
 * The store port's contract (backend.ts: the Store, the SilenceStore and ownership), every
 * case run against both backends, opened the way the daemon and the CLI open them
 * (openBackend). What only one backend has (SQLite's group commit, lock and checkpoints;
 * PostgreSQL's fencing across replicas and outages) is tested beside it, in store.test.ts and
 * postgres/postgres-store.test.ts.
 */
interface Subject {
  name: string;
  /** Where a new, empty store lives: the options every open of this case shares. */
  location(): Promise<OpenBackendOptions>;
  /** Whether replicas share this backend (Backend.replicas). */
  replicas: boolean;
}

let server: TestPostgres | undefined;
const temps: Array<ReturnType<typeof makeTempDir>> = [];
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.dispose();
  for (const temp of temps.splice(0)) temp.remove();
});

const subjects: Subject[] = [
  {
    name: "SQLite",
    replicas: false,
    location: async () => {
      const temp = makeTempDir();
      temps.push(temp);
      return { path: join(temp.dir, "data", "kaiawatch.json") };
    },
  },
  {
    name: "PostgreSQL",
    replicas: true,
    location: async () => ({ path: "unused", url: await createTestDatabase(server!.url), replicaId: "r1", leaseMs: 10_000 }),
  },
];

const t0 = "2025-01-01T00:00:00.000Z";
const t1 = "2025-01-01T00:05:00.000Z";
const t2 = "2025-01-01T00:10:00.000Z";
const HOUR = 3_600_000;

describe.each(subjects)("the store port on $name", (subject) => {
  const opened: Backend[] = [];
  let where: OpenBackendOptions;
  afterEach(async () => {
    for (const backend of opened.splice(0).reverse()) await backend.close().catch(() => undefined);
  });

  async function open(options: Partial<OpenBackendOptions> = {}, common: Common = createTestCommon()): Promise<Backend> {
    where ??= await subject.location();
    const backend = await openBackend(common, { ...where, ...options });
    opened.push(backend);
    return backend;
  }

  /** A fresh store of this backend for the case. */
  async function fresh(): Promise<Backend> {
    where = await subject.location();
    return open();
  }

  async function seeded() {
    const { store } = await fresh();
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack"), entry("a1", "email"), entry("a2", "slack"), entry("a3", "slack")] });
    return store;
  }

  describe("Store: round trips", () => {
    it("reads back cursors, outbox entries and meta after a reopen", async () => {
      const first = await fresh();
      expect(await first.store.listCursors()).toEqual([]);
      await first.store.commitWindow({ cursor: cursor("s1", 10), entries: [entry("a1", "slack"), entry("a1", "email")] });
      await first.store.setCursor(cursor("s2", 5));
      await first.store.setMeta("recent", { keys: ["x", "y"] });
      await first.close();

      const { store } = await open({ replicaId: "r2" });
      expect(await store.getCursor("s1")).toEqual(cursor("s1", 10));
      expect((await store.listCursors()).map((c) => c.key)).toEqual(["s1", "s2"]);
      expect((await store.listOutbox()).map((e) => e.id)).toEqual(["a1:slack", "a1:email"]);
      // Byte for byte: even the alert's key order comes back.
      expect(JSON.stringify((await store.listOutbox())[0]?.alert)).toBe(JSON.stringify(entry("a1", "slack").alert));
      expect(await store.getMeta("recent")).toEqual({ keys: ["x", "y"] });
      expect(await store.getMeta("missing")).toBeUndefined();
    });

    it("stores a copy of meta values and removes a key set to undefined", async () => {
      const { store } = await fresh();
      const value = { n: 1 };
      await store.setMeta("k", value);
      value.n = 2;
      expect(await store.getMeta("k")).toEqual({ n: 1 });
      await store.setMeta("k", undefined);
      expect(await store.getMeta("k")).toBeUndefined();
    });

    it("hands out copies: changing a returned cursor or entry changes nothing stored", async () => {
      const { store } = await fresh();
      await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
      const c = await store.getCursor("s1");
      const [e] = await store.listOutbox();
      if (c === undefined || e === undefined) throw new Error("missing");
      c.block = 999;
      e.state = "dead";
      expect((await store.getCursor("s1"))?.block).toBe(1);
      expect((await store.listOutbox())[0]?.state).toBe("pending");
    });
  });

  describe("Store: typed meta slots", () => {
    it("read back what was written through a slot; a stored value its schema refuses reads as absent", async () => {
      const { store } = await fresh();
      const slot = metaSlot("test_slot", z.object({ day: z.string(), n: z.number() }));
      expect(await readMeta(store, slot)).toBeUndefined();
      await writeMeta(store, slot, { day: "2025-01-01", n: 3 });
      expect(await readMeta(store, slot)).toEqual({ day: "2025-01-01", n: 3 });
      await store.setMeta("test_slot", { day: "2025-01-01", n: "three" });
      expect(await readMeta(store, slot)).toBeUndefined();
      await writeMeta(store, slot, undefined);
      expect(await store.getMeta("test_slot")).toBeUndefined();
    });
  });

  describe("Store: commitWindow", () => {
    it("does not add an entry twice when a window is committed again (re-scan after rewind or crash)", async () => {
      const { store } = await fresh();
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
      const { store } = await fresh();
      expect(await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack"), entry("a1", "slack")] })).toEqual({ added: 1 });
    });

    it("refuses to move a cursor backwards and changes nothing", async () => {
      const { store } = await fresh();
      await store.commitWindow({ cursor: cursor("s1", 10), entries: [] });
      await expect(store.commitWindow({ cursor: cursor("s1", 9), entries: [entry("a1", "slack")] })).rejects.toMatchObject({ code: "KW_STORE_CURSOR_BACKWARDS" });
      expect((await store.getCursor("s1"))?.block).toBe(10);
      expect(await store.listOutbox()).toEqual([]);
      expect((await store.stats()).failedWrites).toBe(0);
    });

    it("moves a cursor for an operator, backwards too, and says where it was", async () => {
      const { store } = await fresh();
      expect(await store.moveCursor(cursor("s1", 10))).toEqual({});
      expect(await store.moveCursor(cursor("s1", 4))).toEqual({ before: 10 });
      expect((await store.getCursor("s1"))?.block).toBe(4);
    });
  });

  describe("Store: cursors that follow a source's", () => {
    const position = (key: string, block: number) => ({ ...cursor(key, block), description: `position of ${key}` });

    it("read at the higher of their own block and the source's, move with its commits, and keep where they are when it goes back", async () => {
      const first = await fresh();
      const { store } = first;
      await store.setCursor(cursor("shared", 10));
      expect(await store.followCursor({ source: "shared", followers: [position("w1", 5), position("w2", 20)] })).toEqual({ generation: 1 });
      expect((await store.getCursor("w1"))?.block).toBe(10);
      expect((await store.getCursor("w2"))?.block).toBe(20);
      expect((await store.getCursor("shared"))?.followers).toBe(1);
      // A quiet window (deferred on PostgreSQL) moves them too, before and after it is written,
      // and a position that moved with it was updated when it was.
      await store.commitWindow({ cursor: cursor("shared", 30, t1), entries: [] });
      expect([(await store.getCursor("w1"))?.block, (await store.getCursor("w2"))?.block]).toEqual([30, 30]);
      expect((await store.getCursor("w1"))?.updated_at).toBe(t1);
      await store.flush();
      expect((await store.listCursors()).map((c) => [c.key, c.block, c.follows, c.followers])).toEqual([
        ["shared", 30, undefined, 1],
        ["w1", 30, "shared", undefined],
        ["w2", 30, "shared", undefined],
      ]);
      // Written where they read, then the source goes back: they stay.
      await store.followCursor({ source: "shared", followers: [position("w1", 30), position("w2", 30)] });
      await store.setCursor(cursor("shared", 3));
      expect((await store.getCursor("w1"))?.block).toBe(30);
      await first.close();
      const reopened = await open({ replicaId: "r2" });
      expect((await reopened.store.getCursor("w2"))?.block).toBe(30);
    });

    it("let go of a follower left out, at the block it read as, and count every change of followers, an operator's move of one too", async () => {
      const { store } = await fresh();
      await store.setCursor(cursor("shared", 10));
      await store.followCursor({ source: "shared", followers: [position("w1", 5), position("w2", 5)] });
      await store.commitWindow({ cursor: cursor("shared", 40, t1), entries: [entry("a1", "slack")] });
      expect(await store.followCursor({ source: "shared", followers: [position("w2", 40)] })).toEqual({ generation: 2 });
      await store.commitWindow({ cursor: cursor("shared", 50, t2), entries: [entry("a2", "slack")] });
      const w1 = await store.getCursor("w1");
      expect([w1?.block, w1?.updated_at, w1?.follows]).toEqual([40, t1, undefined]);
      expect((await store.getCursor("w2"))?.block).toBe(50);
      // Moving a follower makes it follow nothing, and is a change the source's poller must see.
      expect(await store.moveCursor(position("w2", 7))).toEqual({ before: 50 });
      expect([(await store.getCursor("w2"))?.block, (await store.getCursor("w2"))?.follows]).toEqual([7, undefined]);
      expect((await store.getCursor("shared"))?.followers).toBe(3);
      // Following another source is a change of the first's followers as well.
      await store.followCursor({ source: "shared", followers: [position("w1", 40)] });
      await store.followCursor({ source: "other", followers: [position("w1", 40)] });
      expect((await store.getCursor("shared"))?.followers).toBe(5);
      // A source with no cursor yet: its followers read at their own block.
      expect(await store.getCursor("other")).toBeUndefined();
      expect(await store.getCursor("w1")).toMatchObject({ block: 40, follows: "other" });
    });
  });

  describe("Store: outbox", () => {
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
      expect((await store.listOutbox({ limit: 2, newestFirst: true })).map((e) => e.id)).toEqual(["a3:slack", "a2:slack"]);
    });

    it("records failures, deliveries, dead letters, requeues and groups in one write, and counts them", async () => {
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

    it("prunes the oldest deliveries in batches, by delivery time, and nothing else", async () => {
      const { store } = await fresh();
      await store.commitWindow({ cursor: cursor("s1", 1), entries: [...Array.from({ length: 25 }, (_, i) => entry(`a${i}`, "slack")), entry("p", "slack")] });
      await store.updateOutbox(Array.from({ length: 25 }, (_, i) => ({ id: `a${i}:slack`, kind: "delivered" as const, at: new Date(Date.UTC(2025, 0, 1, 0, 25 - i)).toISOString() })));
      const cutoff = "2025-01-01T00:21:00.000Z";
      expect(await store.pruneDelivered(cutoff, 8)).toBe(8);
      expect((await store.listOutbox({ state: "delivered" })).map((e) => e.id).slice(-3)).toEqual(["a14:slack", "a15:slack", "a16:slack"]);
      expect(await store.pruneDelivered(cutoff)).toBe(12);
      expect(await store.pruneDelivered(cutoff)).toBe(0);
      expect(await store.outboxCounts()).toEqual([
        { sink: "slack", state: "delivered", count: 5, retrying: 5 },
        { sink: "slack", state: "pending", count: 1, retrying: 0 },
      ]);
      // A pruned alert re-scanned later is new again.
      expect(await store.commitWindow({ cursor: cursor("s1", 2), entries: [entry("a24", "slack")] })).toEqual({ added: 1 });
    });
  });

  describe("Store: each alert kept once", () => {
    const sinks = ["slack", "email", "webhook", "discord", "telegram"];

    it("keeps the document of an alert for five sinks once; each sink's entry reads it; it goes with the last entry pruned", async () => {
      const first = await fresh();
      await first.store.commitWindow({ cursor: cursor("s1", 1), entries: [...sinks.map((sink) => entry("a1", sink, { padding: 2000 })), entry("a2", "slack")] });
      expect(await first.store.stats()).toMatchObject({ outbox: 6, alerts: 2 });
      await first.close();

      const { store } = await open();
      const document = JSON.stringify(entry("a1", "slack", { padding: 2000 }).alert);
      const entries = await store.listOutbox();
      expect(entries.map((e) => e.id)).toEqual([...sinks.map((sink) => `a1:${sink}`), "a2:slack"]);
      for (const e of entries.slice(0, 5)) expect(JSON.stringify(e.alert)).toBe(document);

      // One sink dead-lettered and requeued, the others delivered and pruned: the document stays for the one left.
      await store.updateOutbox([
        ...sinks.slice(0, 4).map((sink) => ({ id: `a1:${sink}`, kind: "delivered" as const, at: t0 })),
        { id: "a1:telegram", kind: "dead", at: t0, reason: "HTTP 404" },
        { id: "a2:slack", kind: "delivered", at: t0 },
      ]);
      expect(await store.pruneDelivered(t1)).toBe(5);
      expect(await store.stats()).toMatchObject({ outbox: 1, alerts: 1 });
      await store.updateOutbox([{ id: "a1:telegram", kind: "requeue", at: t1 }]);
      const [left] = await store.listOutbox({ sink: "telegram", state: "pending" });
      expect(JSON.stringify(left?.alert)).toBe(document);

      await store.updateOutbox([{ id: "a1:telegram", kind: "delivered", at: t1 }]);
      expect(await store.pruneDelivered(t2)).toBe(1);
      expect(await store.stats()).toMatchObject({ outbox: 0, alerts: 0 });
    });

    it("gives an entry added later for another sink the document kept first, and adds none for known entries", async () => {
      const { store } = await fresh();
      await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
      // A re-scan after a sink was added to the rule: the alert id is the same, its document is not re-read.
      const later = entry("a1", "email", { padding: 10 });
      expect(await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack", { padding: 10 }), later] })).toEqual({ added: 1 });
      const entries = await store.listOutbox();
      expect(entries.map((e) => e.id)).toEqual(["a1:slack", "a1:email"]);
      expect(entries.map((e) => e.alert)).toEqual([entry("a1", "slack").alert, entry("a1", "slack").alert]);
      expect(await store.enqueue([entry("a1", "email")])).toEqual({ added: 0 });
      expect(await store.stats()).toMatchObject({ outbox: 2, alerts: 1 });
    });

    it("lists entries of a shared alert by sink, state and digest with their documents", async () => {
      const { store } = await fresh();
      await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack"), entry("a1", "email"), entry("a2", "slack"), entry("a2", "email")] });
      await store.updateOutbox([
        { id: "a1:email", kind: "group", group_id: "g1" },
        { id: "a2:email", kind: "group", group_id: "g1" },
      ]);
      expect((await store.listOutbox({ groupId: "g1" })).map((e) => [e.id, e.alert.id])).toEqual([
        ["a1:email", "a1"],
        ["a2:email", "a2"],
      ]);
      expect((await store.listOutbox({ sink: "slack", state: "pending", newestFirst: true, limit: 1 })).map((e) => [e.id, e.alert.summary])).toEqual([["a2:slack", "alert a2"]]);
    });
  });

  describe("Store: cooldown stamps and suppression notes", () => {
    it("keep one stamp per (sink, rule, key), never going back in time, across a reopen; pruned by age", async () => {
      const first = await fresh();
      await first.store.writeCooldowns([
        { sink: "slack", rule: "r", key: "", at: 1000, entryId: "a1:slack" },
        { sink: "slack", rule: "r", key: "0x/\u2028odd", at: 2000 },
        { sink: "mail", rule: "r", key: "", at: 3000 },
      ]);
      await first.store.writeCooldowns([{ sink: "slack", rule: "r", key: "", at: 500 }]);
      await first.close();
      const { store } = await open();
      const keys = [
        { rule: "r", key: "" },
        { rule: "r", key: "0x/\u2028odd" },
        { rule: "r", key: "none" },
      ];
      const sorted = async (sink: string) => (await store.readCooldowns(sink, keys)).sort((a, b) => a.at - b.at);
      expect(await sorted("slack")).toEqual([
        { sink: "slack", rule: "r", key: "", at: 1000, entryId: "a1:slack" },
        { sink: "slack", rule: "r", key: "0x/\u2028odd", at: 2000 },
      ]);
      expect(await store.pruneCooldowns(2500)).toBe(2);
      expect(await store.readCooldowns("slack", keys)).toEqual([]);
      expect(await store.readCooldowns("mail", keys)).toEqual([{ sink: "mail", rule: "r", key: "", at: 3000 }]);
    });

    it("keep a suppression note beside its delivered entry until the entry is pruned", async () => {
      const { store } = await fresh();
      await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack"), entry("a2", "slack"), entry("a3", "slack")] });
      const at = "2025-01-01T00:01:00.000Z";
      await store.updateOutbox([
        { id: "a1:slack", kind: "delivered", at, suppressed: "silence" },
        { id: "a2:slack", kind: "delivered", at },
        // An inhibit rule's hold (inhibit_rules): recorded like a silence's.
        { id: "a3:slack", kind: "delivered", at, suppressed: "inhibited" },
      ]);
      expect(await store.suppressions(["a1:slack", "a2:slack", "a3:slack"])).toEqual({ "a1:slack": { at, reason: "silence" }, "a3:slack": { at, reason: "inhibited" } });
      expect(await store.pruneDelivered("2025-02-01T00:00:00.000Z")).toBe(3);
      expect(await store.suppressions(["a1:slack", "a3:slack"])).toEqual({});
    });
  });

  describe("Store: delivery history", () => {
    const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();

    it("records a delivery that failed twice then succeeded as three attempts, each with its change, across a reopen", async () => {
      const first = await fresh();
      const store = first.store;
      await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack"), entry("a2", "slack")] });
      await store.updateOutbox([{ id: "a1:slack", kind: "failed", at: at(1), error: "HTTP 503", next_attempt_at: at(2), history: { delivery_id: "a1", attempt: 1, status: 503, latency_ms: 12.4, error: "sink slack (slack): answered HTTP 503" } }], { durable: false });
      await store.updateOutbox([{ id: "a1:slack", kind: "failed", at: at(2), error: "timeout", next_attempt_at: at(3), history: { delivery_id: "a1", attempt: 2, latency_ms: 5000, error: "no answer within 5000 ms" } }]);
      await store.updateOutbox([{ id: "a1:slack", kind: "delivered", at: at(3), history: { delivery_id: "a1", attempt: 3, status: 200, latency_ms: 8 } }]);
      // A change without a note (an operator's, a digest's grouping) records no attempt.
      await store.updateOutbox([{ id: "a2:slack", kind: "group", group_id: "g1" }]);
      await first.close();

      const { store: again } = await open();
      expect(await again.listAttempts({ alertId: "a1" })).toEqual([
        { at: at(3), alert_id: "a1", sink: "slack", rule: "big-outflow", delivery_id: "a1", attempt: 3, outcome: "delivered", status: 200, latency_ms: 8 },
        { at: at(2), alert_id: "a1", sink: "slack", rule: "big-outflow", delivery_id: "a1", attempt: 2, outcome: "failed", latency_ms: 5000, error: "no answer within 5000 ms" },
        { at: at(1), alert_id: "a1", sink: "slack", rule: "big-outflow", delivery_id: "a1", attempt: 1, outcome: "failed", status: 503, latency_ms: 12, error: "sink slack (slack): answered HTTP 503" },
      ]);
      expect(await again.listAttempts({ alertId: "a2" })).toEqual([]);
    });

    it("defers a pending entry to a later time without counting an attempt, with a suppressed history row; only a pending one", async () => {
      const store = await seeded();
      const until = at(3600);
      await store.updateOutbox([{ id: "a1:slack", kind: "defer", at: at(1), until, note: "muted until then", history: { delivery_id: "a1", attempt: 1, error: "muted until then" } }]);
      const [entry] = (await store.listOutbox({ sink: "slack" })).filter((e) => e.id === "a1:slack");
      expect(entry).toMatchObject({ state: "pending", attempts: 0, next_attempt_at: until, last_error: "muted until then" });
      expect((await store.listAttempts({ alertId: "a1" })).map((a) => [a.outcome, a.error])).toEqual([["suppressed", "muted until then"]]);
      await store.updateOutbox([{ id: "a1:slack", kind: "delivered", at: at(2) }]);
      await expect(store.updateOutbox([{ id: "a1:slack", kind: "defer", at: at(3), until, note: "x" }])).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
    });

    it("records dead letters, suppressions and digests, and filters by alert, sink, rule, outcome and time, newest first", async () => {
      const store = await seeded();
      const long = `refused: ${"x".repeat(1000)}`;
      await store.updateOutbox([
        { id: "a1:slack", kind: "group", group_id: "g1" },
        { id: "a2:slack", kind: "group", group_id: "g1" },
        { id: "a1:slack", kind: "delivered", at: at(1), history: { delivery_id: "g1", attempt: 1, status: 204, latency_ms: 3 } },
        { id: "a2:slack", kind: "delivered", at: at(1), history: { delivery_id: "g1", attempt: 1, status: 204, latency_ms: 3 } },
        { id: "a1:email", kind: "dead", at: at(2), reason: "permanent error", history: { delivery_id: "a1", attempt: 1, error: long } },
        { id: "a3:slack", kind: "delivered", at: at(3), suppressed: "silence", history: { delivery_id: "a3", attempt: 1 } },
      ]);
      const all = await store.listAttempts();
      expect(all.map((a) => [a.alert_id, a.sink, a.outcome, a.delivery_id])).toEqual([
        ["a3", "slack", "suppressed", "a3"],
        ["a1", "email", "dead", "a1"],
        ["a2", "slack", "delivered", "g1"],
        ["a1", "slack", "delivered", "g1"],
      ]);
      // Capped, never the whole answer.
      expect(all[1]?.error?.length).toBeLessThanOrEqual(300);
      expect(all[1]?.error?.startsWith("refused: xxx")).toBe(true);
      expect((await store.listAttempts({ sink: "slack", outcome: "delivered" })).map((a) => a.alert_id)).toEqual(["a2", "a1"]);
      expect((await store.listAttempts({ rule: "big-outflow", limit: 2 })).map((a) => a.alert_id)).toEqual(["a3", "a1"]);
      expect((await store.listAttempts({ rule: "other" })).length).toBe(0);
      expect((await store.listAttempts({ since: at(2) })).map((a) => a.outcome)).toEqual(["suppressed", "dead"]);
      expect((await store.listAttempts({ until: at(2) })).map((a) => a.outcome)).toEqual(["dead", "delivered", "delivered"]);
      expect((await store.listAttempts({ alertId: "a1", since: at(1), until: at(1) })).map((a) => a.sink)).toEqual(["slack"]);
    });

    it("writes nothing of a refused batch, and prunes the oldest attempts in batches by time, apart from the outbox", async () => {
      const store = await seeded();
      await expect(
        store.updateOutbox([
          { id: "a1:slack", kind: "failed", at: at(1), error: "x", next_attempt_at: at(2), history: { delivery_id: "a1", attempt: 1, error: "x" } },
          { id: "nope:slack", kind: "delivered", at: at(1), history: { delivery_id: "nope", attempt: 1 } },
        ]),
      ).rejects.toMatchObject({ code: "KW_STORE_OUTBOX_CHANGE" });
      expect(await store.listAttempts()).toEqual([]);
      for (let minute = 1; minute <= 5; minute++) {
        await store.updateOutbox([{ id: "a2:slack", kind: "failed", at: at(minute), error: "x", next_attempt_at: at(minute + 1), history: { delivery_id: "a2", attempt: minute, error: "x" } }]);
      }
      expect(await store.pruneAttempts(at(4), 2)).toBe(2);
      expect(await store.pruneAttempts(at(4))).toBe(1);
      expect(await store.pruneAttempts(at(4))).toBe(0);
      expect((await store.listAttempts()).map((a) => a.attempt)).toEqual([5, 4]);
      // The entry itself is the outbox's: still pending, its attempts counted.
      expect((await store.listOutbox({ sink: "slack", state: "pending" })).find((e) => e.id === "a2:slack")?.attempts).toBe(5);
    });
  });

  describe("Store: balance episodes", () => {
    const key = { rule: "payer-low", address: "0x00000000000000000000000000000000000fee00", asset: "KAIA" };
    const alertOf = (id: string) => entry(id, "pd").alert;

    it("opens an episode once, carries it on, closes it once, with its alerts in the same write, across a reopen", async () => {
      const backend = await fresh();
      const firing = alertOf("b1");
      expect(await backend.store.commitBalanceEpisodes({ changes: [{ ...key, expect: null, next: { alert: firing, clear: 0, repeats: 0, reminded_at: null } }], entries: [entry("b1", "pd")] })).toEqual({ added: 1 });
      // A second writer that read no episode: refused whole, its alert not queued.
      await expect(backend.store.commitBalanceEpisodes({ changes: [{ ...key, expect: null, next: { alert: alertOf("b2"), clear: 0, repeats: 0, reminded_at: null } }], entries: [entry("b2", "pd")] })).rejects.toMatchObject({ code: "KW_STORE_EPISODE_CONFLICT" });
      expect((await backend.store.listOutbox()).map((e) => e.id)).toEqual(["b1:pd"]);
      await backend.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b1", next: { alert: firing, clear: 1, repeats: 0, reminded_at: null } }], entries: [] });
      await backend.close();

      const again = await open();
      expect(await again.store.listBalanceEpisodes()).toEqual([{ ...key, alert: firing, clear: 1, repeats: 0, reminded_at: null }]);
      // Closing an episode that is not the one open (a stale reader) changes nothing.
      await expect(again.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b0", next: null }], entries: [entry("b0:resolved", "pd")] })).rejects.toMatchObject({ code: "KW_STORE_EPISODE_CONFLICT" });
      expect(await again.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b1", next: null }], entries: [entry("b1:resolved", "pd")] })).toEqual({ added: 1 });
      await expect(again.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b1", next: null }], entries: [] })).rejects.toMatchObject({ code: "KW_STORE_EPISODE_CONFLICT" });
      expect(await again.store.listBalanceEpisodes()).toEqual([]);
      expect((await again.store.listOutbox()).map((e) => e.id)).toEqual(["b1:pd", "b1:resolved:pd"]);
    });

    it("applies a write of many episodes all or nothing, and refuses a batch no writer means", async () => {
      const backend = await fresh();
      const other = { ...key, asset: "0x00000000000000000000000000000000000000aa" };
      await backend.store.commitBalanceEpisodes({ changes: [{ ...key, expect: null, next: { alert: alertOf("b1"), clear: 0, repeats: 0, reminded_at: null } }], entries: [] });
      // The first change would pass, the second conflicts: neither is written.
      await expect(
        backend.store.commitBalanceEpisodes({ changes: [{ ...other, expect: null, next: { alert: alertOf("c1"), clear: 0, repeats: 0, reminded_at: null } }, { ...key, expect: null, next: { alert: alertOf("b9"), clear: 0, repeats: 0, reminded_at: null } }], entries: [entry("c1", "pd")] }),
      ).rejects.toMatchObject({ code: "KW_STORE_EPISODE_CONFLICT" });
      expect((await backend.store.listBalanceEpisodes()).map((e) => e.alert.id)).toEqual(["b1"]);
      expect(await backend.store.countOutbox()).toBe(0);
      await expect(backend.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b1", next: { alert: alertOf("b2"), clear: 0, repeats: 0, reminded_at: null } }], entries: [] })).rejects.toThrow(/cannot go on as b2/);
      await expect(backend.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b1", next: null }, { ...key, expect: "b1", next: null }], entries: [] })).rejects.toThrow(/two changes/);
    });
  });

  describe("Store: absence rules' states", () => {
    const state = (rule: string, through: number, episode: string | null = null): AbsenceState => ({
      rule,
      since: { block: 1, time: 1_735_689_600 },
      through,
      recent: [{ block: through - 1, time: 1_735_689_600 + through - 2, count: 2 }],
      at_least: 3,
      episode: episode === null ? null : entry(episode, "pd").alert,
    });

    it("keeps each rule's state with the window that observed it, by rule, across a reopen", async () => {
      const first = await fresh();
      expect(await first.store.listAbsences()).toEqual([]);
      // A quiet window: the state goes with the cursor advance, whether deferred with it or not.
      await first.store.commitWindow({ cursor: cursor("s1", 10), entries: [], absences: [state("upkeep", 10), state("oracle", 10)] });
      await first.store.commitWindow({ cursor: cursor("s1", 12), entries: [entry("e1", "pd")], absences: [state("upkeep", 12, "e1")] });
      await first.close();

      const { store } = await open({ replicaId: "r2" });
      expect(await store.listAbsences()).toEqual([state("oracle", 10), state("upkeep", 12, "e1")]);
      expect(await store.listAbsences(["upkeep", "gone"])).toEqual([state("upkeep", 12, "e1")]);
      expect((await store.getCursor("s1"))?.block).toBe(12);
      expect((await store.listOutbox()).map((e) => e.id)).toEqual(["e1:pd"]);
    });

    it("writes no state of a window it refuses", async () => {
      const { store } = await fresh();
      await store.commitWindow({ cursor: cursor("s1", 10), entries: [], absences: [state("upkeep", 10)] });
      await expect(store.commitWindow({ cursor: cursor("s1", 9), entries: [entry("e1", "pd")], absences: [state("upkeep", 9, "e1")] })).rejects.toMatchObject({ code: "KW_STORE_CURSOR_BACKWARDS" });
      expect(await store.listAbsences()).toEqual([state("upkeep", 10)]);
      expect(await store.listOutbox()).toEqual([]);
    });
  });

  describe("Store: witnesses of source: both watches", () => {
    const witness = (alertId: string, role: WitnessRole, block: number): Witness => ({
      alert_id: alertId,
      role,
      watch: "treasury",
      family: "event_logs",
      rule: "big-transfer",
      block,
      record_key: `0x${"ab".repeat(32)}:${block}`,
      summary: `transfer at ${block}`,
      transaction_hash: `0x${"ab".repeat(32)}`,
      seen_at: t0,
    });

    it("keeps what one reader found with its window, and drops both rows when the other reader finds the same alert, across a reopen", async () => {
      const first = await fresh();
      // A window with alerts and one without: the witnesses go with either.
      await first.store.commitWindow({ cursor: cursor("explorer", 10), entries: [entry("a1", "pd")], witnesses: [witness("a1", "explorer", 7), witness("a2", "explorer", 9)] });
      await first.store.commitWindow({ cursor: cursor("node", 8), entries: [], witnesses: [witness("a3", "node", 8)] });
      // Committed again (a re-scan): still one row each.
      await first.store.commitWindow({ cursor: cursor("explorer", 10), entries: [entry("a1", "pd")], witnesses: [witness("a1", "explorer", 7)] });
      await first.close();

      const { store } = await open({ replicaId: "r2" });
      expect(await store.listWitnesses({ missed: false })).toEqual([witness("a1", "explorer", 7), witness("a3", "node", 8), witness("a2", "explorer", 9)]);
      // The node finds a1 and a2; the explorer finds a3: every pair goes, in the window's write.
      await store.commitWindow({ cursor: cursor("node", 12), entries: [entry("a1", "pd")], witnesses: [witness("a1", "node", 7), witness("a2", "node", 9)] });
      await store.commitWindow({ cursor: cursor("explorer", 12), entries: [], witnesses: [witness("a3", "explorer", 8)] });
      expect(await store.listWitnesses({ missed: false })).toEqual([]);
      expect(await store.countWitnesses()).toEqual({ open: 0, missed: { explorer: 0, node: 0 } });
      expect((await store.listOutbox()).map((e) => e.id)).toEqual(["a1:pd"]);
    });

    it("writes no witness of a window it refuses", async () => {
      const { store } = await fresh();
      await store.commitWindow({ cursor: cursor("explorer", 10), entries: [] });
      await expect(store.commitWindow({ cursor: cursor("explorer", 9), entries: [entry("a1", "pd")], witnesses: [witness("a1", "explorer", 9)] })).rejects.toMatchObject({ code: "KW_STORE_CURSOR_BACKWARDS" });
      expect(await store.listWitnesses({ missed: false })).toEqual([]);
    });

    it("settles a missed witness once, with its alert's entries in the same write; a pair found at settling goes; reported ones are counted, listed newest first and pruned by age", async () => {
      const { store } = await fresh();
      await store.commitWindow({ cursor: cursor("node", 20), entries: [], witnesses: [witness("n1", "node", 5), witness("n2", "node", 6), witness("o1", "node", 7)] });
      await store.commitWindow({ cursor: cursor("explorer", 20), entries: [], witnesses: [witness("e1", "explorer", 8)] });
      const report = (alertId: string, role: WitnessRole) => ({ alert_id: alertId, role, entries: [entry(`missed-${alertId}`, "ops")] });
      const first = await store.settleWitnesses({ missed: [report("n1", "node")], at: t1 });
      expect(first).toEqual({ marked: [{ alert_id: "n1", role: "node" }], added: 1 });
      // Again (a second replica, or a restart before the verdict was known): nothing more.
      expect(await store.settleWitnesses({ missed: [report("n1", "node")], at: t2 })).toEqual({ marked: [], added: 0 });
      await store.settleWitnesses({ missed: [report("e1", "explorer"), report("n2", "node")], at: t2 });
      expect((await store.listOutbox()).map((e) => e.id)).toEqual(["missed-n1:ops", "missed-e1:ops", "missed-n2:ops"]);
      expect(await store.countWitnesses()).toEqual({ open: 1, missed: { explorer: 1, node: 2 } });
      expect((await store.listWitnesses({ missed: true })).map((w) => [w.alert_id, w.missed_at])).toEqual([
        ["e1", t2],
        ["n2", t2],
        ["n1", t1],
      ]);
      expect(await store.listWitnesses({ missed: true, limit: 1 })).toEqual([{ ...witness("e1", "explorer", 8), missed_at: t2 }]);
      // A reported witness stays when the other reader shows the record late: the report's record.
      await store.commitWindow({ cursor: cursor("explorer", 21), entries: [], witnesses: [witness("n1", "explorer", 5)] });
      expect((await store.countWitnesses()).missed.node).toBe(2);
      expect(await store.listWitnesses({ missed: false })).toEqual([witness("o1", "node", 7)]);
      expect(await store.pruneWitnesses(t2)).toBe(1);
      expect((await store.listWitnesses({ missed: true })).map((w) => w.alert_id)).toEqual(["e1", "n2"]);
      expect(await store.listWitnesses({ missed: false })).toEqual([witness("o1", "node", 7)]);
    });
  });

  describe("Store: balance episodes' reminders", () => {
    const key = { rule: "payer-low", address: "0x00000000000000000000000000000000000fee00", asset: "KAIA" };

    it("carries the repeat count and the reminder's time with the episode, writes the reminder's entries in the same write, across a reopen, and forgets them with the episode", async () => {
      const backend = await fresh();
      const firing = entry("b1", "pd").alert;
      await backend.store.commitBalanceEpisodes({ changes: [{ ...key, expect: null, next: { alert: firing, clear: 0, repeats: 0, reminded_at: null } }], entries: [entry("b1", "pd")] });
      expect(await backend.store.listBalanceEpisodes()).toEqual([{ ...key, alert: firing, clear: 0, repeats: 0, reminded_at: null }]);
      const at = "2025-01-01T01:00:00.000Z";
      // The first reminder: the count and time change under the episode's id, its entry joins the outbox.
      expect(await backend.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b1", next: { alert: firing, clear: 0, repeats: 1, reminded_at: at } }], entries: [entry("b1:repeat:1", "pd")] })).toEqual({ added: 1 });
      // A writer deciding the same reminder again (after a crash, say): the count stays, the outbox keeps one.
      expect(await backend.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b1", next: { alert: firing, clear: 0, repeats: 1, reminded_at: at } }], entries: [entry("b1:repeat:1", "pd")] })).toEqual({ added: 0 });
      // A reminder of an episode another writer closed meanwhile is refused whole: never a reminder after the resolve.
      await backend.close();
      const again = await open();
      expect(await again.store.listBalanceEpisodes()).toEqual([{ ...key, alert: firing, clear: 0, repeats: 1, reminded_at: at }]);
      await again.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b1", next: null }], entries: [entry("b1:resolved", "pd")] });
      await expect(again.store.commitBalanceEpisodes({ changes: [{ ...key, expect: "b1", next: { alert: firing, clear: 0, repeats: 2, reminded_at: at } }], entries: [entry("b1:repeat:2", "pd")] })).rejects.toMatchObject({ code: "KW_STORE_EPISODE_CONFLICT" });
      expect((await again.store.listOutbox()).map((e) => e.id)).toEqual(["b1:pd", "b1:repeat:1:pd", "b1:resolved:pd"]);
      // A new episode of the same key starts counting again.
      const next = entry("b2", "pd").alert;
      await again.store.commitBalanceEpisodes({ changes: [{ ...key, expect: null, next: { alert: next, clear: 0, repeats: 0, reminded_at: null } }], entries: [] });
      expect(await again.store.listBalanceEpisodes()).toEqual([{ ...key, alert: next, clear: 0, repeats: 0, reminded_at: null }]);
    });
  });

  describe("Store: read-only and closed", () => {
    it("reads when opened read-only beside a writer and refuses changes; refuses changes after close", async () => {
      const writer = await fresh();
      await writer.store.commitWindow({ cursor: cursor("s1", 7), entries: [entry("a1", "slack")] });
      const reader = await open({ readOnly: true });
      expect(reader.store.readOnly).toBe(true);
      expect((await reader.store.getCursor("s1"))?.block).toBe(7);
      expect(await reader.store.listOutbox({ state: "pending" })).toHaveLength(1);
      await expect(reader.store.setCursor(cursor("s1", 8))).rejects.toMatchObject({ code: "KW_STORE_READ_ONLY" });
      await expect(reader.silences.add(newSilence({ rule: "r", match: {}, forMs: HOUR, reason: "x", now: Date.parse(t0) }))).rejects.toMatchObject({ code: "KW_STORE_READ_ONLY" });
      await writer.close();
      await expect(writer.store.setMeta("k", 1)).rejects.toMatchObject({ code: "KW_STORE_CLOSED" });
    });
  });

  describe("SilenceStore", () => {
    it("keeps silences in force until they expire or are removed, oldest first, with their counts", async () => {
      const { silences } = await fresh();
      const now = Date.parse(t0);
      const early = newSilence({ rule: "r", match: { to: "0xaa" }, forMs: HOUR, reason: "sweep", now });
      const late = newSilence({ rule: "q", match: {}, forMs: 2 * HOUR, reason: "noisy", now: now + 1000 });
      await silences.add(late);
      await silences.add(early);
      await silences.add(early); // again: nothing changes
      expect(await silences.active(now + 2000)).toEqual([
        { ...early, suppressed: 0 },
        { ...late, suppressed: 0 },
      ]);
      await silences.count(new Map([[early.id, 2]]));
      await silences.count(new Map([[early.id, 1]]));
      expect((await silences.active(now + 2000)).map((s) => [s.id, s.suppressed])).toEqual([
        [early.id, 3],
        [late.id, 0],
      ]);
      // Expired: gone from the active ones.
      expect((await silences.active(now + HOUR + 1)).map((s) => s.id)).toEqual([late.id]);
      expect(await silences.remove(late.id, now + 2000)).toEqual(late);
      expect(await silences.remove(late.id, now + 2000)).toBeUndefined();
      expect(await silences.remove("sil_00000000", now)).toBeUndefined();
      expect((await silences.active(now + 2000)).map((s) => s.id)).toEqual([early.id]);
    });

    it("keep a label silence (no rule, label matchers) as a row beside a record-field one, and give both back as made", async () => {
      const { silences } = await fresh();
      const now = Date.parse(t0);
      const labels = newSilence({ match: {}, matchers: parseMatchers('{severity="warning", team=~"nft.*"}'), forMs: HOUR, reason: "release night", now });
      const fields = newSilence({ rule: "r", match: { to: "0xaa" }, forMs: HOUR, reason: "one noisy counterparty", now: now + 1 });
      await silences.add(labels);
      await silences.add(fields);
      expect(labels).toEqual({ id: labels.id, match: {}, matchers: ['severity="warning"', 'team=~"nft.*"'], reason: "release night", created_at: labels.created_at, expires_at: labels.expires_at });
      expect(await silences.active(now + 2)).toEqual([
        { ...labels, suppressed: 0 },
        { ...fields, suppressed: 0 },
      ]);
      expect(await silences.remove(labels.id, now + 2)).toEqual(labels);
    });

    it("are written by a CLI's open (read-only store, writable silences) beside the daemon's, and read by it", async () => {
      const daemon = await fresh();
      const cli = await open({ readOnly: true, silencesWritable: true });
      const now = Date.parse(t0);
      const silence = newSilence({ rule: "r", match: {}, forMs: HOUR, reason: "from the CLI", now });
      await cli.silences.add(silence);
      await expect(cli.store.setCursor(cursor("s1", 1))).rejects.toMatchObject({ code: "KW_STORE_READ_ONLY" });
      expect((await daemon.silences.active(now)).map((s) => s.id)).toEqual([silence.id]);
      expect(await cli.silences.remove(silence.id, now)).toEqual(silence);
      expect(await daemon.silences.active(now)).toEqual([]);
    });
  });

  describe("ownership", () => {
    it(`is ${subject.replicas ? "leased among replicas" : "sole"}: alone, this process holds every resource it takes part with, and its commits pass`, async () => {
      const backend = await fresh();
      expect(backend.replicas !== undefined).toBe(subject.replicas);
      const ownership = backend.ownership(createTestCommon(), {});
      const resources = [leaseResource({ source: "s1" }), leaseResource({ sink: "slack" }), leaseResource({ balance: "payer" }), leaseResource("operational")];
      await ownership.start(resources);
      try {
        for (const resource of resources) expect(ownership.holds(resource)).toBeDefined();
        const lease = ownership.use(leaseResource({ source: "s1" }));
        expect(lease).toBeDefined();
        await backend.store.commitWindow({ cursor: cursor("s1", 3), entries: [entry("a1", "slack")], epoch: lease?.epoch });
        lease?.done();
        expect((await backend.store.getCursor("s1"))?.block).toBe(3);
        // A balance watch's episodes are written under its lease, fenced by its epoch where replicas share the store.
        const balance = ownership.use(leaseResource({ balance: "payer" }));
        expect(balance).toBeDefined();
        const episode = { rule: "low", address: "0x00000000000000000000000000000000000fee00", asset: "KAIA", expect: null, next: { alert: entry("e1", "slack").alert, clear: 0, repeats: 0, reminded_at: null } };
        const stale = backend.store.commitBalanceEpisodes({ changes: [episode], entries: [], lease: { resource: leaseResource({ balance: "payer" }), epoch: (balance?.epoch ?? 0) + 1 } });
        if (subject.replicas) await expect(stale).rejects.toMatchObject({ code: "KW_STORE_LEASE_LOST" });
        else await stale;
        await backend.store.commitBalanceEpisodes({ changes: subject.replicas ? [episode] : [], entries: [], lease: balance?.epoch === undefined ? undefined : { resource: leaseResource({ balance: "payer" }), epoch: balance.epoch } });
        balance?.done();
        expect((await backend.store.listBalanceEpisodes()).map((e) => e.alert.id)).toEqual(["e1"]);
        if (backend.replicas !== undefined) {
          expect((await backend.replicas.list()).map((r) => [r.id, r.live])).toEqual([[backend.replicas.selfId, true]]);
        }
      } finally {
        await ownership.stop();
      }
    });
  });
});
