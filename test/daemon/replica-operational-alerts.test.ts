import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, OPERATIONAL_RESOURCE, type Daemon } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator } from "../../src/simulator/index.js";
import { leaseResource } from "../../src/store/resources.js";
import { fourSourcesConfig } from "../helpers/four-sources-config.js";
import { configFromText, quietCommon } from "../helpers/harness.js";
import { recording } from "../notify/dispatcher-fixtures.js";
import { fakeClock, usePostgres } from "../store/postgres/pg-fixtures.js";

/**
 * Two daemons on one PostgreSQL against the simulator, driven by hand as their timers would
 * (each replica's clock moved by the test; the timers are set far too slow to fire while it
 * runs, however slow the machine: a 10-minute lease, an hourly check): the
 * replica holding the `operational` lease sends source_failing for the sources the other
 * holds, from the verdict the other publishes in its heartbeat, and resolves it.
 */
const pg = usePostgres();
const STEP_MS = 10_000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("operational alerts with two replicas (daemons)", () => {
  it("the sending replica raises and resolves source_failing of the sources the other replica holds", async () => {
    const sim = await createSimulator({ seed: 17, initialBlocks: 30 });
    cleanups.push(() => sim.close());
    const url = await pg.database();
    const clocks = [fakeClock(Date.now()), fakeClock(Date.now())] as const;
    const daemonOf = async (id: string, clock: (typeof clocks)[number]): Promise<Daemon> => {
      const config = configFromText(
        fourSourcesConfig(sim, {
          store: `{ url: "${url}", replica_id: ${id}, lease: 10m }`,
          explorer: "max_retries: 0",
          defaults: 'schedule: "0 0 0 1 1 *", start: latest',
          sections: "operational: { source_failing_after: 30s, check_interval: 1h, head_stuck_after: 1h }",
          sinks: '  ops: { type: webhook, url: "http://127.0.0.1:9/unused", allow_http: true, operational: true }',
        }),
      );
      const daemon = await createDaemon(quietCommon({ now: clock.now }), { config, sinks: { out: recording("out"), ops: recording("ops") } });
      cleanups.push(() => daemon.stop());
      return daemon;
    };
    const r1 = await daemonOf("r1", clocks[0]);
    const r2 = await daemonOf("r2", clocks[1]);
    await r1.start();
    await r2.start();
    const replicas = [r1, r2];
    // Their first ticks over first: a lease in use is handed over only after its tick, which
    // on a busy machine could outlast the rounds below and leave a source held by neither.
    for (const r of replicas) await r.engine.idle();
    for (let i = 0; i < 3; i++) for (const r of replicas) await r.ownership.renewNow();
    const sender = replicas.find((r) => r.ownership.holds(OPERATIONAL_RESOURCE) !== undefined)!;
    const other = replicas.find((r) => r !== sender)!;
    const keys = r1.plan.sources.map((source) => source.key);
    const elsewhere = keys.filter((key) => other.ownership.holds(leaseResource({ source: key })) !== undefined);
    const here = keys.filter((key) => sender.ownership.holds(leaseResource({ source: key })) !== undefined);
    expect(elsewhere.length).toBeGreaterThan(0);
    expect(here.length + elsewhere.length).toBe(keys.length);

    const round = async () => {
      for (const clock of clocks) clock.advance(STEP_MS);
      sim.mine(1);
      for (const r of replicas) await r.ownership.renewNow();
      for (const r of replicas) await r.engine.runOnce();
      other.health.judgeSources();
      await other.ownership.renewNow();
      await sender.health.check();
    };
    const alerts = async (): Promise<AlertDocument[]> => (await sender.store.listOutbox({ sink: "ops" })).map((entry) => entry.alert).filter((alert) => (alert.record as { kind?: string }).kind === "source_failing");
    const conditionsOf = (list: AlertDocument[], status: string) => list.filter((alert) => alert.status === status).map((alert) => (alert.record as { condition: string }).condition).sort();
    const failingOf = (list: readonly string[]) => list.map((key) => `source_failing:${key}`).sort();

    await round();
    // The explorer fails every request: every source fails on the replica that holds it.
    sim.setFaults({ maintenance: true });
    for (let i = 0; i < 5; i++) await round();
    const firing = await alerts();
    expect(conditionsOf(firing, "firing")).toEqual(failingOf(keys));
    for (const alert of firing.filter((one) => elsewhere.some((key) => (one.record as { condition: string }).condition.endsWith(key)))) {
      expect(alert.record).toMatchObject({ replica: other.ownership.replicaId });
    }
    // /readyz stays each replica's own: the sender's problems name only its own sources.
    const problems = (await sender.health.evaluate()).problems.filter((problem) => problem.kind === "source_failing");
    expect(problems.length).toBe(here.length);

    sim.setFaults({ maintenance: false });
    await round();
    const after = await alerts();
    expect(conditionsOf(after, "resolved")).toEqual(failingOf(keys));
    for (const alert of after.filter((one) => one.status === "resolved")) expect(firing.map((one) => `${one.id}:resolved`)).toContain(alert.id);
    await round();
    expect((await alerts()).length).toBe(2 * keys.length);
  });
});
