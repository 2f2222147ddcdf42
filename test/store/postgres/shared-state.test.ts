import { beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { createDispatcher, type DispatcherRule } from "../../../src/notify/dispatcher.js";
import { readSuppressedNotes } from "../../../src/notify/cooldown.js";
import { parseMatchers } from "../../../src/notify/matchers.js";
import { buildRouteTree } from "../../../src/notify/routes.js";
import { parseNamedTimeIntervals } from "../../../src/notify/time-intervals.js";
import { createSilenceBook, newSilence } from "../../../src/notify/silences.js";
import { leaseResource, type LeaseResource } from "../../../src/store/resources.js";
import { createLeaseKeeper } from "../../../src/store/postgres/lease-keeper.js";
import type { CooldownStamp } from "../../../src/store/types.js";
import { commit, entry, recording, type TestSink } from "../../notify/dispatcher-fixtures.js";
import { waitFor, workFor } from "../../helpers/wait-for.js";
import { usePostgres } from "./pg-fixtures.js";

/**
 * What replicas share besides cursors and the outbox (issue 15): cooldown stamps, suppression
 * notes and silences, each in rows of its own, and a sink delivered by one replica at a time.
 * Two stores on one real PostgreSQL stand for two replicas.
 */
const server = usePostgres();
let url: string;
beforeEach(async () => {
  url = await server.database();
});

const HOUR = 3600_000;
const sinkOptions = (sink: TestSink) => ({ sink, concurrency: 1, maxAttempts: 3, maxAgeMs: HOUR });
const cooled: DispatcherRule = { name: "r", cooldownMs: HOUR };

describe("cooldowns shared by replicas", () => {
  it("are one row per (sink, rule, key): concurrent writers lose no stamp, and a stamp never goes back in time", async () => {
    const [r1, r2] = [await server.open(url, { replicaId: "r1" }), await server.open(url, { replicaId: "r2" })];
    const now = Date.UTC(2025, 0, 1);
    // Forty writes at once, interleaved between the two replicas, each for its own sink.
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      const stamp: CooldownStamp = { sink: `s${i % 8}`, rule: "r", key: `k${i}`, at: now + i, entryId: `e${i}` };
      writes.push((i % 2 === 0 ? r1 : r2).writeCooldowns([stamp]));
    }
    await Promise.all(writes);
    for (let s = 0; s < 8; s++) {
      const keys = Array.from({ length: 40 }, (_, i) => ({ rule: "r", key: `k${i}` }));
      const stamps = await r1.readCooldowns(`s${s}`, keys);
      expect(stamps.map((stamp) => stamp.key).sort()).toEqual(Array.from({ length: 5 }, (_, j) => `k${s + 8 * j}`).sort());
    }
    // One key, written by both with different times in either order: the later one stays.
    await Promise.all([r1.writeCooldowns([{ sink: "x", rule: "r", key: "", at: now + 10, entryId: "late" }]), r2.writeCooldowns([{ sink: "x", rule: "r", key: "", at: now + 5, entryId: "early" }])]);
    await r2.writeCooldowns([{ sink: "x", rule: "r", key: "", at: now + 1 }]);
    expect(await r2.readCooldowns("x", [{ rule: "r", key: "" }])).toEqual([{ sink: "x", rule: "r", key: "", at: now + 10, entryId: "late" }]);
    expect(await r1.pruneCooldowns(now + 20)).toBe(21);
  });

  it("hold across replicas: stamps two replicas write at once for their own sinks both hold back the next alert wherever it is admitted", async () => {
    const common = createTestCommon();
    const [r1, r2, r3] = [await server.open(url, { replicaId: "r1" }, common), await server.open(url, { replicaId: "r2" }, common), await server.open(url, { replicaId: "r3" }, common)];
    const [a1, b1] = [recording("a"), recording("b")];
    await commit(r1, [entry("x1", "a"), entry("x1", "b")]);
    // r1 delivers sink a and r2 sink b, at the same time (the one-value book of before lost one of the two stamps here).
    const d1 = createDispatcher(common, { store: r1, sinks: [sinkOptions(a1)], rules: [cooled] });
    const d2 = createDispatcher(common, { store: r2, sinks: [sinkOptions(b1)], rules: [cooled] });
    await Promise.all([d1.drain({ timeoutMs: 10_000 }), d2.drain({ timeoutMs: 10_000 })]);
    expect([a1.delivered, b1.delivered]).toEqual([["x1"], ["x1"]]);

    // A third replica takes both sinks over: the next alert of the rule is held back on both.
    const [a3, b3] = [recording("a"), recording("b")];
    await commit(r3, [entry("x2", "a"), entry("x2", "b")]);
    const d3 = createDispatcher(common, { store: r3, sinks: [sinkOptions(a3), sinkOptions(b3)], rules: [cooled] });
    const result = await d3.drain({ timeoutMs: 10_000 });
    expect(result.suppressed).toBe(2);
    expect([a3.delivered, b3.delivered]).toEqual([[], []]);
    const notes = await readSuppressedNotes(r1, await r1.listOutbox());
    expect(Object.entries(notes).map(([id, note]) => [id, note.reason]).sort()).toEqual([
      ["x2:a", "cooldown"],
      ["x2:b", "cooldown"],
    ]);
  });

  it("let through an alert that was admitted and not sent before its replica died, on the replica that takes the sink over", async () => {
    const common = createTestCommon();
    const [r1, r2] = [await server.open(url, { replicaId: "r1" }, common), await server.open(url, { replicaId: "r2" }, common)];
    await commit(r1, [entry("x1", "a")]);
    // r1 stamped x1's cooldown and died before its send was recorded: the stamp names x1.
    await r1.writeCooldowns([{ sink: "a", rule: "r", key: "", at: common.now(), entryId: "x1:a" }]);
    const sink = recording("a");
    await createDispatcher(common, { store: r2, sinks: [sinkOptions(sink)], rules: [cooled] }).drain({ timeoutMs: 10_000 });
    expect(sink.delivered).toEqual(["x1"]);
  });
});

describe("silences shared by replicas", () => {
  it("a silence added through one replica holds back the next alert another replica admits; removal and counts are shared", async () => {
    const common = createTestCommon();
    const [r1, r2] = [await server.open(url, { replicaId: "r1" }, common), await server.open(url, { replicaId: "r2" }, common)];
    const book2 = await createSilenceBook(common, { silences: r2.silences });
    const sink = recording("a");
    const d2 = createDispatcher(common, { store: r2, sinks: [sinkOptions(sink)], rules: [{ name: "r" }], silences: book2 });

    // r2 has read the (empty) silences already; the one added now through r1 holds at r2's next round.
    const silence = newSilence({ rule: "r", match: { to: "0xAA" }, forMs: HOUR, reason: "maintenance", now: common.now() });
    await r1.silences.add(silence);
    await commit(r1, [entry("x1", "a", "r", { record: { to: "0xaa" } }), entry("x2", "a", "r", { record: { to: "0xbb" } })]);
    expect((await d2.drain({ timeoutMs: 10_000 })).suppressed).toBe(1);
    expect(sink.delivered).toEqual(["x2"]);
    expect(await readSuppressedNotes(r1, await r1.listOutbox())).toEqual({ "x1:a": { at: expect.any(String), reason: "silence" } });
    await waitFor(async () => JSON.stringify((await r1.silences.active(common.now())).map((s) => [s.id, s.suppressed])) === JSON.stringify([[silence.id, 1]]), 10_000, "the silence's count of one held back, in PostgreSQL");

    // Removed through r1: r2 sends the next matching alert.
    expect(await r1.silences.remove(silence.id, common.now())).toEqual(silence);
    expect(await r1.silences.remove(silence.id, common.now())).toBeUndefined();
    await commit(r1, [entry("x3", "a", "r", { record: { to: "0xaa" } })]);
    await d2.drain({ timeoutMs: 10_000 });
    expect(sink.delivered).toEqual(["x2", "x3"]);
    expect(book2.list(common.now())).toEqual([]);
  });
});

describe("label silences shared by replicas", () => {
  it("a label silence added through one replica holds back a routed alert another admits, beside a record-field silence", async () => {
    const common = createTestCommon();
    const [r1, r2] = [await server.open(url, { replicaId: "r1" }, common), await server.open(url, { replicaId: "r2" }, common)];
    const book2 = await createSilenceBook(common, { silences: r2.silences });
    const sink = recording("a");
    const routes = buildRouteTree({ receiver: "a", group_wait: 0, group_by: ["..."] });
    const d2 = createDispatcher(common, { store: r2, sinks: [sinkOptions(sink)], rules: [{ name: "nft", routed: true }, { name: "r" }], routes, silences: book2 });
    const labelled = (id: string, rule: string, severity: string, record: unknown = {}) => {
      const base = entry(id, "a", rule, { record });
      return { ...base, alert: { ...base.alert, labels: { rule, watch: "w", source: "nft_transfers", severity, team: "nft-drops" } } };
    };

    const byLabels = newSilence({ match: {}, matchers: parseMatchers('severity="warning"').concat(parseMatchers('team=~"nft.*"')), forMs: HOUR, reason: "release night", now: common.now() });
    const byRecord = newSilence({ rule: "r", match: { to: "0xAA" }, forMs: HOUR, reason: "one noisy counterparty", now: common.now() + 1 });
    await r1.silences.add(byLabels);
    await r1.silences.add(byRecord);
    await commit(r1, [labelled("w1", "nft", "warning"), labelled("c1", "nft", "critical"), labelled("x1", "r", "info", { to: "0xaa" }), labelled("x2", "r", "info", { to: "0xbb" })]);
    expect((await d2.drain({ timeoutMs: 10_000 })).suppressed).toBe(2);
    expect(sink.delivered.sort()).toEqual(["c1", "x2"]);
    expect(await readSuppressedNotes(r1, await r1.listOutbox())).toEqual({ "w1:a": { at: expect.any(String), reason: "silence" }, "x1:a": { at: expect.any(String), reason: "silence" } });
    const counts = JSON.stringify([
      [byLabels.id, 1],
      [byRecord.id, 1],
    ]);
    await waitFor(async () => JSON.stringify((await r1.silences.active(common.now())).map((s) => [s.id, s.suppressed])) === counts, 10_000, "each silence's count of one held back, in PostgreSQL");
  });
});

describe("time intervals across replicas", () => {
  it("replicas agree: an episode muted through one waits in the store and is sent once, by the other, when the mute ends", async () => {
    // Saturday noon UTC, then Monday 00:01: the clock is injected, both replicas read the same one.
    let now = Date.UTC(2030, 0, 5, 12);
    const common = createTestCommon({ now: () => now });
    const [r1, r2] = [await server.open(url, { replicaId: "r1" }, common), await server.open(url, { replicaId: "r2" }, common)];
    const intervals = parseNamedTimeIntervals([{ name: "weekend", time_intervals: [{ weekdays: ["saturday", "sunday"] }] }]);
    const routes = buildRouteTree({ receiver: "a", group_wait: 0, routes: [{ matchers: ['severity="warning"'], mute_time_intervals: ["weekend"] }] }, intervals);
    const sink = recording("a");
    const rules = [{ name: "low", routed: true }];
    const base = entry("ep1", "a", "low", { createdAt: new Date(now).toISOString() });
    const firing = { ...base, alert: { ...base.alert, episode_id: "ep1", status: "firing" as const, labels: { rule: "low", watch: "w", source: "balances", severity: "warning" } } };
    await commit(r1, [firing]);

    const d1 = createDispatcher(common, { store: r1, sinks: [sinkOptions(sink)], rules, routes });
    expect((await d1.drain({ timeoutMs: 10_000 })).pending).toBe(1);
    await d1.stop();
    expect(sink.calls).toEqual([]);
    expect((await r2.listOutbox({ state: "pending" })).map((e) => e.next_attempt_at)).toEqual(["2030-01-07T00:00:00.000Z"]);

    now = Date.UTC(2030, 0, 7, 0, 1);
    const d2 = createDispatcher(common, { store: r2, sinks: [sinkOptions(sink)], rules, routes });
    expect(await d2.drain({ timeoutMs: 10_000 })).toMatchObject({ delivered: 1, pending: 0 });
    expect(sink.delivered).toEqual(["ep1"]);
  });
});

describe("a sink across replicas", () => {
  it("is delivered by one replica at a time: its lease (sink:<name>) holds its concurrency and order across replicas, also through a handover", async () => {
    const common = createTestCommon();
    const [r1, r2] = [await server.open(url, { replicaId: "r1" }, common), await server.open(url, { replicaId: "r2" }, common)];
    const resources = [leaseResource({ sink: "a" }), leaseResource({ sink: "b" })];
    const k1 = createLeaseKeeper(common, { leases: r1.leases, replicaId: "r1", leaseMs: 10_000 });
    const k2 = createLeaseKeeper(common, { leases: r2.leases, replicaId: "r2", leaseMs: 10_000 });
    // r1 starts with sink a alone in the plan, then r2 with both: each holds one, and both run with both sinks configured.
    await k1.start([leaseResource({ sink: "a" })]);
    await k2.start(resources);
    const holders = (resource: LeaseResource) => [k1, k2].filter((k) => k.holds(resource) !== undefined).map((k) => k.replicaId);
    expect(resources.map(holders)).toEqual([["r1"], ["r2"]]);

    // One receiver per sink, shared by both replicas' sink objects: it sees every send of either.
    const receivers = new Map(["a", "b"].map((name) => [name, { inFlight: 0, maxInFlight: 0, by: new Set<string>(), received: [] as string[] }]));
    const sinkOf = (name: string, replica: string) =>
      recording(name, async (delivery) => {
        const receiver = receivers.get(name)!;
        receiver.inFlight++;
        receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
        receiver.by.add(replica);
        await workFor(3);
        receiver.received.push(...delivery.alerts.map((a) => a.id));
        receiver.inFlight--;
      });
    const dispatcherOf = (replica: string, store: typeof r1, ownership: typeof k1) =>
      createDispatcher(common, { store, ownership, sinks: [sinkOptions(sinkOf("a", replica)), sinkOptions(sinkOf("b", replica))], rules: [], idlePollMs: 20 });
    const d1 = dispatcherOf("r1", r1, k1);
    const d2 = dispatcherOf("r2", r2, k2);
    d1.start();
    d2.start();
    const alerts = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => [entry(`x${from + i}`, "a"), entry(`x${from + i}`, "b")]).flat();
    await commit(r1, alerts(0, 30));
    d1.kick();
    d2.kick();
    const all = (n: number) => [...receivers.values()].every((receiver) => receiver.received.length >= n);
    await waitFor(() => all(30), 20_000, "30 deliveries through both replicas");
    // Each sink was delivered by exactly one replica, never two sends at once.
    expect([...receivers.values()].map((receiver) => receiver.by.size)).toEqual([1, 1]);

    // A handover: r1 stops (its sends end, then its leases go back) and r2 takes its sink over.
    await d1.stop();
    await k1.stop();
    await k2.renewNow();
    expect(resources.map(holders)).toEqual([["r2"], ["r2"]]);
    await commit(r2, alerts(30, 60));
    d2.kick();
    await waitFor(() => all(60), 20_000, "60 deliveries after the handover");
    await d2.stop();
    await k2.stop();
    for (const receiver of receivers.values()) {
      expect(receiver.maxInFlight).toBe(1);
      expect(receiver.received).toEqual(Array.from({ length: 60 }, (_, i) => `x${i}`));
    }
  });
});
