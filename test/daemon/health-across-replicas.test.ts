import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHealthMonitor, type HealthMonitor } from "../../src/daemon/health-monitor.js";
import { createOperationalMonitor } from "../../src/daemon/operational-monitor.js";
import { createReplicaHealth } from "../../src/daemon/replica-health.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { type Ownership } from "../../src/store/ownership.js";
import { leaseResource } from "../../src/store/resources.js";
import { createLeaseKeeper } from "../../src/store/postgres/lease-keeper.js";
import type { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import type { SourceState } from "../../src/watch/engine.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";
import { idleContractsToOut } from "../helpers/simulator-config.js";
import { fakeClock, usePostgres } from "../store/postgres/pg-fixtures.js";

/**
 * Replicas on one real PostgreSQL: each runs a lease keeper and a health monitor (the engine's
 * states given as data, one clock moved by hand). r1 sends the operational alerts (check());
 * r2 only judges the sources it holds and publishes the verdict in its heartbeat
 * (judgeSources() then a renewal), as the daemon's health timer does on a replica without
 * the `operational` lease.
 */
const pg = usePostgres();
const LEASE_MS = 60_000;
const STEP_MS = 10_000;
const HEAD = 1000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Outcome = "ok" | "error";

interface Replica {
  id: string;
  store: PostgresStore;
  keeper: Ownership;
  health: HealthMonitor;
  holds(key: string): boolean;
  /** One tick of every source this replica holds, each as `outcomes` says (ok by default). */
  tick(outcomes: ReadonlyMap<string, Outcome>): void;
}

async function setup() {
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const config = configFromText(`
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9" }
store: { path: ${join(dir.path, "unused.db")} }
status: { listen: false }
operational: { source_failing_after: 30s, head_stuck_after: 1h }
defaults: { schedule: "* * * * * *", start: latest }
${idleContractsToOut(4, 1)}
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`);
  const plan = planFromConfig(config);
  const keys = plan.sources.map((source) => source.key);
  const clock = fakeClock(Date.now());
  const url = await pg.database();
  const at = (ms: number) => new Date(ms).toISOString();

  async function replica(id: string): Promise<Replica> {
    const common = quietCommon({ now: clock.now });
    const store = await pg.open(url, { replicaId: id, leaseMs: LEASE_MS }, common);
    const shared = createReplicaHealth({ replicaId: id, replicas: () => store.leases.replicas() });
    const keeper = createLeaseKeeper(common, { leases: store.leases, replicaId: id, leaseMs: LEASE_MS, info: shared.info, flush: () => store.flush() });
    const holds = (key: string) => keeper.holds(leaseResource({ source: key })) !== undefined;
    // What this replica's engine knows of each source (never ticked here: all null).
    const states = new Map<string, SourceState>(plan.sources.map((source) => [source.key, { key: source.key, watch: source.watch, description: source.key, running: false, last_tick_at: null, last_ok_at: null, last_outcome: null, last_error: null, last_tick_seconds: null, ticks: 0, skipped: 0, cursor: null }]));
    const health = createHealthMonitor(common, {
      thresholds: config.operational,
      sources: plan.sources,
      engine: { states: () => [...states.values()] },
      store,
      // No sink readings: the operational alerts wait in the outbox (nothing delivers here), which is not what this test is about.
      sinks: [],
      head: { state: () => ({ block: HEAD, read_at: at(clock.now()), error: null }) },
      budget: { state: () => ({ budget: null, spent_today: 0, paused_until: null, quota: null }) },
      holds,
      shared,
      monitor: await createOperationalMonitor(common, { store, sinks: ["ops"], network: "mainnet", head: () => HEAD, onQueued: () => {} }),
    });
    return {
      id,
      store,
      keeper,
      health,
      holds,
      tick(outcomes) {
        const now = at(clock.now());
        for (const key of keys.filter(holds)) {
          const before = states.get(key)!;
          const outcome = outcomes.get(key) ?? "ok";
          states.set(key, { ...before, last_tick_at: now, last_outcome: outcome, last_ok_at: outcome === "ok" ? now : before.last_ok_at, last_error: outcome === "ok" ? null : "KW_EXPLORER_HTTP: 503 from the explorer", ticks: before.ticks + 1, cursor: HEAD });
        }
      },
    };
  }

  const r1 = await replica("r1");
  const r2 = await replica("r2");
  // r2 takes every source first; at its renewal it sheds down to the even share, and r1 claims the rest.
  const resources = keys.map((key) => leaseResource({ source: key }));
  await r2.keeper.start(resources);
  cleanups.push(() => r2.keeper.stop());
  await r1.keeper.start(resources);
  cleanups.push(() => r1.keeper.stop());
  await r2.keeper.renewNow();
  await r1.keeper.renewNow();
  for (const key of keys) expect([r1, r2].filter((r) => r.holds(key)).length, key).toBe(1);
  const onR2 = keys.filter(r2.holds);
  expect(onR2.length).toBe(2);

  /** The operational alerts queued for `ops` about one condition, in order. */
  const alertsOf = async (condition: string): Promise<AlertDocument[]> =>
    (await r1.store.listOutbox({ sink: "ops" }))
      .map((entry) => entry.alert)
      .filter((alert) => (alert.record as { condition?: unknown }).condition === condition)
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.status === "firing" ? -1 : 1));
  return { clock, keys, r1, r2, failing: onR2[0]!, alertsOf };
}

/**
 * One round as the daemons' timers do it: the clock moves, the live replicas renew their
 * leases and tick what they hold, r2 publishes its verdict with its next heartbeat, r1 checks.
 */
async function round(world: Awaited<ReturnType<typeof setup>>, outcomes: { r1?: Map<string, Outcome>; r2?: Map<string, Outcome> }, options: { r2Alive?: boolean } = {}) {
  const { clock, r1, r2 } = world;
  clock.advance(STEP_MS);
  await r1.keeper.renewNow();
  r1.tick(outcomes.r1 ?? new Map());
  if (options.r2Alive ?? true) {
    r2.tick(outcomes.r2 ?? new Map());
    r2.health.judgeSources();
    await r2.keeper.renewNow();
  }
  await r1.health.check();
}

const sourceProblems = async (health: HealthMonitor) => (await health.evaluate()).problems.filter((problem) => problem.check === "sources");

describe("operational alerts of sources held by other replicas", () => {
  it("the replica sending them raises and resolves source_failing of a source another replica holds; /readyz stays each replica's own", async () => {
    const world = await setup();
    const { r1, r2, failing, alertsOf } = world;
    expect(r1.holds(failing)).toBe(false);
    const condition = `source_failing:${failing}`;
    const erroring = new Map<string, Outcome>([[failing, "error"]]);

    // The streak starts with r2's first failed tick; 30 s later it is failing there.
    for (let i = 0; i < 3; i++) await round(world, { r2: erroring });
    expect(await alertsOf(condition)).toEqual([]);
    await round(world, { r2: erroring });
    const firing = await alertsOf(condition);
    expect(firing.map((alert) => alert.status)).toEqual(["firing"]);
    expect(firing[0]!.record).toMatchObject({ kind: "source_failing", source: failing, replica: "r2" });
    // /readyz: r2 says 503 for its source; r1, which does not hold it, is not affected.
    expect((await sourceProblems(r2.health)).map((problem) => problem.kind)).toEqual(["source_failing"]);
    expect(await sourceProblems(r1.health)).toEqual([]);
    expect((await r1.health.evaluate()).sources.map((source) => source.key)).not.toContain(failing);

    // Still failing: nothing more is sent.
    await round(world, { r2: erroring });
    expect((await alertsOf(condition)).length).toBe(1);

    // r2's next tick succeeds: r1 resolves the episode, under the same id family, once.
    await round(world, {});
    const after = await alertsOf(condition);
    expect(after.map((alert) => [alert.status, alert.id])).toEqual([
      ["firing", firing[0]!.id],
      ["resolved", `${firing[0]!.id}:resolved`],
    ]);
    await round(world, {});
    expect((await alertsOf(condition)).length).toBe(2);
  });

  it("a failing source whose holder dies keeps its episode (one id) through the takeover, until its new holder has a verdict", async () => {
    const world = await setup();
    const { clock, r1, failing, alertsOf } = world;
    const condition = `source_failing:${failing}`;
    const erroring = new Map<string, Outcome>([[failing, "error"]]);
    for (let i = 0; i < 4; i++) await round(world, { r2: erroring });
    const firing = await alertsOf(condition);
    expect(firing.map((alert) => alert.status)).toEqual(["firing"]);

    // r2 dies (no more renewals or heartbeats). Until its heartbeat is a lease old it counts
    // as live, and its last verdict (failing) stands.
    for (let elapsed = 0; elapsed + STEP_MS < LEASE_MS; elapsed += STEP_MS) await round(world, { r1: erroring }, { r2Alive: false });
    expect(r1.holds(failing)).toBe(false);
    // A lease later: r2 is not live, its leases have expired and nobody holds the source yet.
    clock.advance(STEP_MS);
    await r1.health.check();
    expect((await alertsOf(condition)).length).toBe(1);
    // r1 takes it over: it has no verdict of it yet, then its ticks fail too (retrying, then failing here).
    await r1.keeper.renewNow();
    expect(r1.holds(failing)).toBe(true);
    await r1.health.check();
    for (let i = 0; i < 4; i++) await round(world, { r1: erroring }, { r2Alive: false });
    expect((await sourceProblems(r1.health)).map((problem) => problem.kind)).toEqual(["source_failing"]);
    expect((await alertsOf(condition)).map((alert) => alert.id)).toEqual([firing[0]!.id]);

    // Its first successful tick on r1 resolves the same episode.
    await round(world, {}, { r2Alive: false });
    expect((await alertsOf(condition)).map((alert) => [alert.status, alert.id])).toEqual([
      ["firing", firing[0]!.id],
      ["resolved", `${firing[0]!.id}:resolved`],
    ]);
  });

  it("a source taken over healthy resolves its episode at the new holder's first successful tick", async () => {
    const world = await setup();
    const { clock, r1, failing, alertsOf } = world;
    const condition = `source_failing:${failing}`;
    for (let i = 0; i < 4; i++) await round(world, { r2: new Map([[failing, "error"]]) });
    expect((await alertsOf(condition)).length).toBe(1);
    clock.advance(LEASE_MS);
    await r1.keeper.renewNow();
    expect(r1.holds(failing)).toBe(true);
    // Taken over, not ticked yet: kept.
    await r1.health.check();
    expect((await alertsOf(condition)).map((alert) => alert.status)).toEqual(["firing"]);
    await round(world, {}, { r2Alive: false });
    expect((await alertsOf(condition)).map((alert) => alert.status)).toEqual(["firing", "resolved"]);
  });

  it("a replica that takes over sending (the operational lease moved) takes the firing episodes from the store: no new id, and it resolves them", async () => {
    const world = await setup();
    const { clock, r1, r2, failing, alertsOf } = world;
    const condition = `source_failing:${failing}`;
    const erroring = new Map<string, Outcome>([[failing, "error"]]);
    for (let i = 0; i < 4; i++) await round(world, { r2: erroring });
    const firing = await alertsOf(condition);
    expect(firing.map((alert) => alert.status)).toEqual(["firing"]);

    // r2 sends from now on (r1 shed the operational lease to it); r1 only judges and publishes.
    await r2.health.resume();
    const r2Round = async (outcome: Map<string, Outcome>) => {
      clock.advance(STEP_MS);
      await r1.keeper.renewNow();
      await r2.keeper.renewNow();
      r1.tick(new Map());
      r1.health.judgeSources();
      await r1.keeper.renewNow();
      r2.tick(outcome);
      await r2.health.check();
    };
    await r2Round(erroring);
    expect((await alertsOf(condition)).map((alert) => alert.id)).toEqual([firing[0]!.id]);
    await r2Round(new Map());
    expect((await alertsOf(condition)).map((alert) => [alert.status, alert.id])).toEqual([
      ["firing", firing[0]!.id],
      ["resolved", `${firing[0]!.id}:resolved`],
    ]);
  });
});
