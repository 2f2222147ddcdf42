import { afterEach, describe, expect, it } from "vitest";
import { admit, type AdmissionInput, type DispatcherRule } from "../../src/notify/admission.js";
import { createDispatcher, type Dispatcher } from "../../src/notify/dispatcher.js";
import { createOperationalMonitor } from "../../src/daemon/operational-monitor.js";
import { alertLabels } from "../../src/notify/labels.js";
import { buildRouteTree, type Route } from "../../src/notify/routes.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { admissionInput, commit, createEnv, entry, recording, type TestEnv } from "./dispatcher-fixtures.js";

// Admission is pure: plain data and a fixed instant, no store and no clock.
const NOW = Date.parse("2026-01-01T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

/** The root sends to "out" grouped by watch; team=treasury goes to "out" too, grouped by rule. */
const ROUTES: Route = buildRouteTree({
  receiver: "out",
  group_by: ["watch"],
  group_wait: 30_000,
  group_interval: 300_000,
  routes: [{ matchers: ["team=treasury"], group_by: ["rule"], group_wait: 10_000 }],
});

function routed(alertId: string, rule: string, watch: string, createdMs: number, labels: Record<string, string> = {}): OutboxEntry {
  const base = entry(alertId, "out", rule, { createdAt: iso(createdMs) });
  return { ...base, alert: { ...base.alert, watch, labels: { ...alertLabels({ rule, watch, source: "nft_transfers", labels }) } } };
}

function input(due: OutboxEntry[], rules: DispatcherRule[], overrides: Partial<AdmissionInput> = {}): AdmissionInput {
  return admissionInput(due, rules, NOW, { routes: ROUTES, ...overrides });
}

const RULES: DispatcherRule[] = [
  { name: "a", routed: true },
  { name: "b", routed: true },
];

describe("admission: the route's grouping", () => {
  it("waits group_wait from the oldest alert, then sends one digest per group_by value, across rules", () => {
    const due = [routed("a1", "a", "hot", NOW - 20_000), routed("b1", "b", "hot", NOW - 15_000), routed("a2", "a", "cold", NOW - 5000)];
    const early = admit(input(due, RULES));
    expect(early.sends).toEqual([]);
    expect(early.nextAt).toBe(NOW - 20_000 + 30_000);

    const later = admit(input(due, RULES, { now: NOW + 10_000 }));
    // hot's group (a1, b1: two rules, one watch) is ready; cold's waits until its own group_wait ends.
    expect(later.sends.map((send) => send.entries.map((e) => e.alert.id))).toEqual([["a1", "b1"]]);
    expect(later.nextAt).toBe(NOW - 5000 + 30_000);
    expect(later.closedDigests[0]?.stamps).toEqual([{ rule: "route:routes", key: '{watch="hot"}' }]);
  });

  it("a child route's own group_by and group_wait apply to what it takes", () => {
    const due = [routed("t1", "a", "hot", NOW - 11_000, { team: "treasury" }), routed("t2", "b", "hot", NOW - 11_000, { team: "treasury" })];
    const result = admit(input(due, RULES));
    // A group of one is sent as that alert, under its own id; it still starts its group's interval.
    expect(result.sends.map((send) => send.id)).toEqual(["t1", "t2"]);
    expect(result.closedDigests).toEqual([]);
    expect(result.cooldownStarts).toEqual([
      { rule: "route:routes.routes[0]", key: '{rule="a"}', entryId: "t1:out" },
      { rule: "route:routes.routes[0]", key: '{rule="b"}', entryId: "t2:out" },
    ]);
  });

  it("after a group's digest, its next alerts wait for group_interval, not group_wait", () => {
    const flushedAt = NOW - 60_000;
    const due = [routed("a3", "a", "hot", NOW - 40_000)];
    const flushes = new Map([['routes\u0000{watch="hot"}', { at: flushedAt }]]);
    const held = admit(input(due, RULES, { groupFlushes: flushes }));
    expect(held.sends).toEqual([]);
    expect(held.nextAt).toBe(flushedAt + 300_000);
    expect(admit(input(due, RULES, { groupFlushes: flushes, now: flushedAt + 300_000 })).sends).toHaveLength(1);
    // A group silent for longer than group_interval starts anew: group_wait again.
    const stale = new Map([['routes\u0000{watch="hot"}', { at: NOW - 400_000 }]]);
    expect(admit(input(due, RULES, { groupFlushes: stale })).sends).toHaveLength(1);
    // Its own stamp (sent alone, then a crash before the outcome was recorded) holds nothing back.
    expect(admit(input(due, RULES, { groupFlushes: new Map([['routes\u0000{watch="hot"}', { at: flushedAt, entryId: "a3:out" }]]) })).sends.map((s) => s.id)).toEqual(["a3"]);
  });

  it("an alert its group sent alone that failed is retried alone, not held for the group's interval", () => {
    const retry = { ...routed("a4", "a", "hot", NOW - 40_000), attempts: 1 };
    const flushes = new Map([['routes\u0000{watch="hot"}', { at: NOW - 10_000 }]]);
    expect(admit(input([retry], RULES, { groupFlushes: flushes })).sends.map((s) => s.id)).toEqual(["a4"]);
  });

  it("a rule with its own notify: (not routed) or group: is not grouped by the tree; an operational alert is", () => {
    const due = [routed("n1", "direct", "hot", NOW), routed("g1", "own", "hot", NOW - 1000), routed("o1", "kaiawatch.operational", "kaiawatch", NOW)];
    const rules: DispatcherRule[] = [{ name: "direct", routed: false }, { name: "own", routed: true, group: { windowMs: 60_000, max: 10 } }];
    const result = admit(input(due, rules));
    expect(result.sends.map((send) => send.id)).toEqual(["n1"]);
    // The operational alert's group (group_wait 30 s) closes first; g1 waits for its rule's 60 s window.
    expect(result.nextAt).toBe(NOW + 30_000);
    expect(admit(input(due, rules, { now: NOW + 30_000 })).sends.map((send) => send.id)).toEqual(["n1", "o1"]);
    const flushed = admit(input(due, rules, { flushGroups: true }));
    expect(flushed.sends.map((send) => send.entries.map((e) => e.alert.id))).toEqual([["n1"], ["g1"], ["o1"]]);
    // g1 is a digest of its rule's group (of one); o1 an alert its route's group sent alone.
    expect(flushed.sends.map((send) => send.id)).toEqual(["n1", expect.stringMatching(/^grp_/), "o1"]);
  });

  it("a sink the tree does not send the alert to is not grouped by it", () => {
    const due = [{ ...routed("x1", "a", "hot", NOW), sink: "elsewhere", id: "x1:elsewhere" }];
    expect(admit(input(due, RULES, { sink: "elsewhere" })).sends.map((send) => send.id)).toEqual(["x1"]);
  });
});

describe("dispatcher: group_interval counts from a digest recorded in the store", () => {
  let env: TestEnv;
  const dispatchers: Dispatcher[] = [];
  afterEach(async () => {
    for (const d of dispatchers.splice(0)) await d.stop();
    await env.cleanup();
  });

  it("the next digest of a group waits for group_interval after the last, also after a restart of the dispatcher", async () => {
    env = await createEnv();
    const sink = recording("out");
    const make = () => {
      const d = createDispatcher(env.common, { store: env.store, idlePollMs: 20, sinks: [{ sink, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 }], rules: RULES, routes: ROUTES });
      dispatchers.push(d);
      return d;
    };
    const now = () => env.common.now();
    await commit(env.store, [routed("a1", "a", "hot", now() - 31_000), routed("b1", "b", "hot", now() - 31_000)]);
    expect(await make().drain({ flushGroups: false, timeoutMs: 2000 })).toMatchObject({ delivered: 2, pending: 0 });
    expect(sink.calls.map((call) => call.alertIds)).toEqual([["a1", "b1"]]);

    // 40 s later: the new alert's group_wait (30 s) is over, the group's interval (5 min) is not.
    env.clock.offsetMs += 40_000;
    await commit(env.store, [routed("a2", "a", "hot", now() - 31_000)]);
    expect(await make().drain({ flushGroups: false, timeoutMs: 300 })).toMatchObject({ delivered: 0, pending: 1 });

    env.clock.offsetMs += 300_000;
    expect(await make().drain({ flushGroups: false, timeoutMs: 2000 })).toMatchObject({ delivered: 1, pending: 0 });
    expect(sink.calls.map((call) => call.alertIds)).toEqual([["a1", "b1"], ["a2"]]);
  });
});

describe("operational alerts through the tree", () => {
  let env: TestEnv;
  afterEach(async () => {
    await env.cleanup();
  });

  it("go to the operational: true sinks and where the tree sends their labels (kind, the watch they are about)", async () => {
    env = await createEnv();
    const routes = buildRouteTree({ receiver: "ops", routes: [{ matchers: ["source=kaiawatch", "watch=treasury"], receiver: "treasury-pager" }] });
    const monitor = await createOperationalMonitor(env.common, { store: env.store, sinks: ["marked"], routes, network: "mainnet", head: () => 100, onQueued: () => {} });
    await monitor.update([
      { key: "source_failing:src_1", kind: "source_failing", summary: "failing", detail: { source: "src_1", watch: "treasury" } },
      { key: "head_stuck", kind: "head_stuck", summary: "stuck", detail: { head: 100 } },
    ]);
    const entries = await env.store.listOutbox();
    const sinksOf = (kind: string) => entries.filter((e) => e.alert.labels?.kind === kind).map((e) => e.sink).sort();
    expect(sinksOf("source_failing")).toEqual(["marked", "treasury-pager"]);
    expect(sinksOf("head_stuck")).toEqual(["marked", "ops"]);
    expect(entries.find((e) => e.alert.labels?.kind === "source_failing")?.alert.labels).toEqual({ kind: "source_failing", rule: "kaiawatch.operational", source: "kaiawatch", watch: "treasury" });
  });
});
