import type { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { leaseResource } from "../../src/store/resources.js";
import { fourSourcesConfig } from "../helpers/four-sources-config.js";
import { configFromText, quietCommon } from "../helpers/harness.js";
import { startLocalFront } from "../helpers/local-front.js";
import { startReceiver } from "../notify/receiver.js";
import { recording } from "../notify/dispatcher-fixtures.js";
import { fakeClock, usePostgres } from "../store/postgres/pg-fixtures.js";

/**
 * The dead man's switch with replicas (issue 31, item 5): two daemons on one real PostgreSQL,
 * each behind its own door to the simulator that the test can shut (503), driven by hand as
 * their timers would (clocks moved by the test; the timers are set far too slow to fire while
 * it runs, however slow the machine: a 10-minute lease, an hourly beat). One replica pings,
 * while it or the other is ready; none pings while neither is; the other takes over when the
 * holder stops.
 */
const pg = usePostgres();
const STEP_MS = 10_000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The explorer API of `target` for one replica; while `shut` it answers 503 (maintenance) to everything. */
async function door(target: string): Promise<{ url: string; shut: boolean }> {
  const front = { url: "", shut: false };
  const { url, close } = await startLocalFront(target, (_req, res) => {
    if (!front.shut) return false;
    res.writeHead(503, { "content-type": "application/json" });
    res.end(JSON.stringify({ code: 503, title: "SERVICE_UNAVAILABLE", message: "maintenance" }));
    return true;
  });
  front.url = url;
  cleanups.push(close);
  return front;
}

/** Each daemon's metrics registry (its own common). */
const registries = new Map<Daemon, Registry>();

/** kaiawatch_heartbeat_pings_total{sink="beat",outcome} of one daemon. */
async function pingCount(daemon: Daemon, outcome: string): Promise<number> {
  const metric = await registries.get(daemon)!.getSingleMetricAsString("kaiawatch_heartbeat_pings_total");
  const line = metric.split("\n").find((row) => row.startsWith("kaiawatch_heartbeat_pings_total{") && row.includes(`outcome="${outcome}"`));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}

describe("heartbeat sink with two replicas (PostgreSQL)", () => {
  it("one replica pings while any is ready, none while none is, and the other takes over when the holder stops", async () => {
    const sim = await createSimulator({ seed: 23, initialBlocks: 30 });
    cleanups.push(() => sim.close());
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const url = await pg.database();
    const clocks = [fakeClock(Date.now()), fakeClock(Date.now())] as const;
    const doors = [await door(sim.url), await door(sim.url)] as const;
    const daemonOf = async (id: string, index: 0 | 1): Promise<Daemon> => {
      const text = fourSourcesConfig(sim, {
        store: `{ url: "${url}", replica_id: ${id}, lease: 10m }`,
        explorer: "max_retries: 0",
        defaults: 'schedule: "0 0 0 1 1 *", start: latest',
        sections: "operational: { source_failing_after: 15s, check_interval: 1h, head_stuck_after: 1h }",
        sinks: `  beat: { type: heartbeat, url: "${receiver.url}/ping", interval: 1h, allow_http: true }`,
      }).replace(`base_url: ${sim.url}`, `base_url: ${doors[index].url}`);
      const common = quietCommon({ now: clocks[index].now });
      const daemon = await createDaemon(common, { config: configFromText(text), sinks: { out: recording("out") } });
      registries.set(daemon, common.metrics.registry);
      cleanups.push(() => daemon.stop());
      return daemon;
    };
    const replicas = [await daemonOf("r1", 0), await daemonOf("r2", 1)];
    for (const r of replicas) await r.start();
    // Their first ticks over first: a lease in use is handed over only after its tick, which
    // on a busy machine could outlast the rounds below and leave a source held by neither.
    for (const r of replicas) await r.engine.idle();
    for (let i = 0; i < 3; i++) for (const r of replicas) await r.ownership.renewNow();
    const sink = leaseResource({ sink: "beat" });
    const holderIndex = replicas.findIndex((r) => r.ownership.holds(sink) !== undefined);
    expect(holderIndex).toBeGreaterThanOrEqual(0);
    expect(replicas.filter((r) => r.ownership.holds(sink) !== undefined).length).toBe(1);
    const holder = replicas[holderIndex]!;
    const other = replicas[1 - holderIndex]!;
    const holderDoor = doors[holderIndex]!;
    const otherDoor = doors[1 - holderIndex]!;
    const pings = () => receiver.requests.filter((request) => request.url === "/ping").length;

    /** One interval: ticks, then the other's beat (its verdict goes out with its renewal), then the holder's. */
    const round = async (live: Daemon[] = replicas) => {
      for (const clock of clocks) clock.advance(STEP_MS);
      sim.mine(1);
      for (const r of live) await r.engine.runOnce().catch(() => undefined);
      const outcomes = [];
      for (const r of [...live].sort((a) => (a === holder ? 1 : -1))) {
        outcomes.push(await r.heartbeats[0]!.beat());
        await r.ownership.renewNow();
      }
      return outcomes;
    };

    // Both ready: the holder pings once an interval, the other does not.
    for (let i = 0; i < 3; i++) await round();
    expect(pings()).toBe(3);
    expect(await pingCount(other, "not_holder")).toBe(3);
    expect(await pingCount(other, "ok")).toBe(0);

    // The holder's sources fail (its door is shut): it is not ready itself, but the other is, so it pings on.
    holderDoor.shut = true;
    for (let i = 0; i < 3; i++) await round();
    expect((await holder.health.evaluate()).problems.some((problem) => problem.kind === "source_failing")).toBe(true);
    expect(pings()).toBe(6);

    // Both fail: nobody is ready, nobody pings (within the interval after the other's verdict turns).
    otherDoor.shut = true;
    for (let i = 0; i < 3; i++) await round();
    const silentFrom = pings();
    for (let i = 0; i < 2; i++) await round();
    expect(pings()).toBe(silentFrom);
    expect(await pingCount(holder, "not_ready")).toBeGreaterThanOrEqual(2);

    // Healed, then the holder stops (its leases released): the other takes the sink at its next renewal and pings.
    doors[0].shut = false;
    doors[1].shut = false;
    await round();
    expect(pings()).toBe(silentFrom + 1);
    await holder.stop();
    await other.ownership.renewNow();
    expect(other.ownership.holds(sink)).toBeDefined();
    await round([other]);
    expect(pings()).toBe(silentFrom + 2);
    expect(await pingCount(other, "ok")).toBe(1);
  });
});
