import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { leaseResource } from "../../src/store/resources.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { waitFor } from "../helpers/child.js";
import { fourSourcesConfig } from "../helpers/four-sources-config.js";
import { configFromText, quietCommon, recordKeyOf, tempDir } from "../helpers/harness.js";
import { recording } from "../notify/dispatcher-fixtures.js";
import { fakeClock, usePostgres } from "../store/postgres/pg-fixtures.js";

/**
 * Replicas sharing one PostgreSQL store, in one process against the simulator. Each replica
 * has its own clock, moved by hand: lease expiry and a paused replica without waiting.
 */
const pg = usePostgres();
// Ten minutes: a keeper renews on its own every third of a lease, on the machine's timers. With
// a short lease a slow run let r1's own renewal learn of the takeover before the test's step
// that needs r1 still unaware of it; the test steps every renewal itself.
const LEASE_MS = 600_000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function simulator(): Promise<Simulator> {
  const sim = await createSimulator({ seed: 15, initialBlocks: 60 });
  cleanups.push(() => sim.close());
  return sim;
}


async function daemonOn(sim: Simulator, store: string, start: number, now: () => number = Date.now): Promise<Daemon> {
  const config = configFromText(fourSourcesConfig(sim, { store, defaults: `start: ${start}, max_window_blocks: 1000` }));
  const daemon = await createDaemon(quietCommon({ now }), { config, sinks: { out: recording("out") } });
  cleanups.push(() => daemon.stop());
  return daemon;
}

async function replicaOn(sim: Simulator, url: string, id: string, start: number, clock: ReturnType<typeof fakeClock>): Promise<Daemon> {
  return daemonOn(sim, `{ url: "${url}", replica_id: ${id}, lease: ${LEASE_MS / 1000}s }`, start, clock.now);
}

const alertKeys = (entries: OutboxEntry[]) => entries.map((entry) => `${entry.rule} ${recordKeyOf(entry.alert)}`).sort();

describe("replicas on PostgreSQL", () => {
  it("queue the same alerts as the file store", async () => {
    const sim = await simulator();
    const start = sim.head() - 50;
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const onFile = await daemonOn(sim, `{ path: ${join(dir.path, "store.json")} }`, start);
    await onFile.runOnce({ drainTimeoutMs: 0 });
    const onPostgres = await daemonOn(sim, `{ url: "${await pg.database()}", replica_id: solo }`, start);
    const pgRun = await onPostgres.runOnce({ drainTimeoutMs: 0 });
    expect(pgRun.scan.results.filter((r) => r.error !== undefined)).toEqual([]);

    const expected = alertKeys(await onFile.store.listOutbox());
    expect(expected.length).toBeGreaterThan(0);
    expect(alertKeys(await onPostgres.store.listOutbox())).toEqual(expected);
    const cursors = (await onPostgres.store.listCursors()).map((cursor) => cursor.block);
    expect(cursors).toEqual((await onFile.store.listCursors()).map((cursor) => cursor.block));
  });

  it("split sources and sinks, each polled by one replica; a dead replica's are taken over after the lease; its late commit is refused", async () => {
    const sim = await simulator();
    const start = sim.head() - 50;
    const url = await pg.database();
    const clocks = [fakeClock(Date.now()), fakeClock(Date.now())] as const;
    const r1 = await replicaOn(sim, url, "r1", start, clocks[0]);
    const r2 = await replicaOn(sim, url, "r2", start, clocks[1]);
    await r1.start();
    await r2.start();
    // r1 took everything alone; at its renewal it sheds down to the even share, r2 claims the
    // rest. A source whose first tick is still running is handed over after it (so the window
    // in flight is polled once): r2 gets it at a later round of renewals.
    const resources = [...r1.plan.sources.map((s) => leaseResource({ source: s.key })), leaseResource({ sink: "out" })];
    const holders = () => resources.map((resource) => [r1, r2].filter((r) => r.ownership.holds(resource) !== undefined).length);
    await waitFor(
      async () => {
        await r1.ownership.renewNow();
        await r2.ownership.renewNow();
        return holders().every((n) => n === 1);
      },
      20_000,
      "every resource held by one replica",
    );
    const held = [r1, r2].map((r) => resources.filter((resource) => r.ownership.holds(resource) !== undefined).length);
    expect(Math.max(...held) - Math.min(...held)).toBeLessThanOrEqual(1);

    // One pass each: every source ticks on exactly one replica, and together they reach the head.
    // (A source this replica does not hold ends its turn without a result.)
    const ticked = async (r: Daemon) => (await r.engine.runOnce()).results.filter((one) => one.result !== undefined).map((one) => one.key);
    expect([...(await ticked(r1)), ...(await ticked(r2))].sort()).toEqual(r1.plan.sources.map((s) => s.key).sort());
    for (const cursor of await r1.store.listCursors()) expect(cursor.block).toBe(sim.head());
    const before = alertKeys(await r1.store.listOutbox());

    // r1 stops renewing (a SIGKILL, a long pause) and its clock stands still; r2's moves past the lease.
    const r1Sources = r1.plan.sources.filter((s) => r1.ownership.holds(leaseResource({ source: s.key })) !== undefined);
    expect(r1Sources.length).toBeGreaterThan(0);
    clocks[1].advance(LEASE_MS + 1);
    await r2.ownership.renewNow();
    for (const resource of resources) expect(r2.ownership.holds(resource), resource).toBeDefined();
    sim.mine(5);
    await r2.engine.runOnce();
    for (const cursor of await r2.store.listCursors()) expect(cursor.block).toBe(sim.head());

    // r1 wakes up believing it still holds its sources (its clock did not move): its ticks
    // scan, but every commit is fenced off, quietly, and nothing moves or doubles.
    sim.mine(3);
    for (const source of r1Sources) expect(r1.ownership.holds(leaseResource({ source: source.key }))).toBeDefined();
    const late = await r1.engine.runOnce();
    expect(late.results.filter((one) => one.result !== undefined).length).toBe(r1Sources.length);
    for (const result of late.results.filter((r) => r1Sources.some((s) => s.key === r.key))) expect(result.error).toBeUndefined();
    for (const cursor of await r1.store.listCursors()) expect(cursor.block).toBe(sim.head() - 3);
    // The alerts before the takeover are all still there, each once.
    const after = alertKeys(await r2.store.listOutbox());
    expect(new Set(after).size).toBe(after.length);
    expect(before.every((key) => after.includes(key))).toBe(true);
  });
});
