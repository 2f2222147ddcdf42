import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHealthMonitor, type HealthMonitor } from "../../src/daemon/health-monitor.js";
import { createOperationalMonitor } from "../../src/daemon/operational-monitor.js";
import { openStore } from "../../src/store/open-store.js";
import type { SourceState } from "../../src/watch/engine.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";
import { fakeClock } from "../store/postgres/pg-fixtures.js";

/**
 * With replicas, the health monitor (what /readyz and the operational alerts read) judges only
 * the sources this replica holds, and a source it takes (back) from when it took it: the
 * others' ticks run elsewhere, and this engine's record of them said "stalled" (never ticked
 * here) or "failing" (ticked before another replica took it). With one process: every source.
 * The engine's states are given as data; the clock is moved by hand.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MINUTE = 60_000;

async function monitorOf(states: () => SourceState[], clock: ReturnType<typeof fakeClock>, holds?: (key: string) => boolean): Promise<{ health: HealthMonitor; keys: string[] }> {
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const config = configFromText(`
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9" }
store: { path: ${join(dir.path, "store.db")} }
status: { listen: false }
operational: { source_failing_after: 30s }
defaults: { schedule: "* * * * * *", start: latest }
watches:
  - { name: a, contract: "0x7000000000000000000000000000000000000001" }
  - { name: b, contract: "0x7000000000000000000000000000000000000002" }
rules:
  - { name: ra, watch: a, notify: [out] }
  - { name: rb, watch: b, notify: [out] }
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`);
  const common = quietCommon({ now: clock.now });
  const store = await openStore(common, { path: config.store.path });
  cleanups.push(() => store.close());
  const plan = planFromConfig(config);
  const head = { state: () => ({ block: 1000, read_at: new Date(clock.now()).toISOString(), error: null }) };
  const health = createHealthMonitor(common, {
    thresholds: config.operational,
    sources: plan.sources,
    engine: { states },
    store,
    sinks: ["out"],
    head,
    budget: { state: () => ({ budget: null, spent_today: 0, paused_until: null, quota: null }) },
    monitor: await createOperationalMonitor(common, { store, sinks: [], network: "mainnet", head: () => 1000, onQueued: () => {} }),
    holds,
  });
  return { health, keys: plan.sources.map((source) => source.key) };
}

function state(key: string, fields: Partial<SourceState>): SourceState {
  return { key, watch: key, description: key, running: false, last_tick_at: null, last_ok_at: null, last_outcome: null, last_error: null, last_tick_seconds: null, ticks: 0, skipped: 0, cursor: null, ...fields };
}

const statesOf = async (health: HealthMonitor) => Object.fromEntries((await health.evaluate()).sources.map((source) => [source.key, source.state]));

describe("the health of a replica's sources", () => {
  it("judges only the sources this replica holds, and one it takes from when it took it", async () => {
    const clock = fakeClock();
    const started = clock.now();
    let heldB = false;
    let states: SourceState[] = [];
    const { health, keys } = await monitorOf(() => states, clock, (key) => key !== keys[1] || heldB);
    const [a, b] = keys as [string, string];
    const at = (ms: number) => new Date(ms).toISOString();

    // Ten minutes in: a ticks here every second; b is another replica's and never ticked here.
    clock.advance(10 * MINUTE);
    states = [state(a, { last_tick_at: at(clock.now() - 1000), last_ok_at: at(clock.now() - 1000), last_outcome: "ok", cursor: 1000 }), state(b, {})];
    const first = await health.evaluate();
    expect(first.sources.map((source) => source.key)).toEqual([a]);
    expect(first.problems).toEqual([]);

    // This replica takes b over: nothing is known of it yet (starting), and it is not stalled.
    heldB = true;
    expect(await statesOf(health)).toEqual({ [a]: "ok", [b]: "starting" });
    // Its stall is measured from when it was taken, not from the start.
    clock.advance(2 * MINUTE);
    states[0] = state(a, { last_tick_at: at(clock.now()), last_ok_at: at(clock.now()), last_outcome: "ok", cursor: 1000 });
    const stalled = await health.evaluate();
    expect(stalled.sources.find((source) => source.key === b)?.state).toBe("stalled");
    expect(stalled.sources.find((source) => source.key === b)?.detail).toMatch(/since this replica took it/);
    // (The head stands still in this test: only the sources' problems are of interest.)
    expect(stalled.problems.map((problem) => problem.kind).filter((kind) => kind.startsWith("source"))).toEqual(["source_stalled"]);

    // b ticks here, fails, and is then lost to another replica: not judged any more.
    states[1] = state(b, { last_tick_at: at(clock.now()), last_outcome: "error", last_error: "boom", cursor: 990 });
    expect((await statesOf(health))[b]).toBe("retrying");
    heldB = false;
    clock.advance(5 * MINUTE);
    expect(Object.keys(await statesOf(health))).toEqual([a]);
    // Taken back later: its old failure (another holding's story) neither counts nor starts a streak.
    heldB = true;
    states[0] = state(a, { last_tick_at: at(clock.now()), last_ok_at: at(clock.now()), last_outcome: "ok", cursor: 1000 });
    expect(await statesOf(health)).toEqual({ [a]: "ok", [b]: "starting" });
    clock.advance(40_000);
    states[0] = state(a, { last_tick_at: at(clock.now()), last_ok_at: at(clock.now()), last_outcome: "ok", cursor: 1000 });
    expect((await statesOf(health))[b]).toBe("starting");
    // Its first tick since then counts as usual.
    states[1] = state(b, { last_tick_at: at(clock.now()), last_outcome: "error", last_error: "boom again", cursor: 990 });
    expect((await statesOf(health))[b]).toBe("retrying");
    expect(started).toBeLessThan(clock.now());
  });

  it("with one process judges every source, from the start", async () => {
    const clock = fakeClock();
    let states: SourceState[] = [];
    const { health, keys } = await monitorOf(() => states, clock);
    const [a, b] = keys as [string, string];
    clock.advance(10 * MINUTE);
    states = [state(a, { last_tick_at: new Date(clock.now()).toISOString(), last_ok_at: new Date(clock.now()).toISOString(), last_outcome: "ok", cursor: 1000 }), state(b, {})];
    expect(await statesOf(health)).toEqual({ [a]: "ok", [b]: "stalled" });
  });
});
