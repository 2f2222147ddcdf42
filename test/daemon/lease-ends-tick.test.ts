import { afterEach, describe, expect, it } from "vitest";
import type { Common } from "../../src/common/common.js";
import { explorerOptionsOf } from "../../src/daemon/explorer-options.js";
import { paginateSource } from "../../src/daemon/paginate-source.js";
import { createExplorerClient } from "../../src/explorer/client.js";
import { createSimulator, type Poll, type Simulator } from "../../src/simulator/index.js";
import { type Ownership } from "../../src/store/ownership.js";
import { leaseResource } from "../../src/store/resources.js";
import { createLeaseKeeper } from "../../src/store/postgres/lease-keeper.js";
import { createWatchEngine, type WatchEngine } from "../../src/watch/engine.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { createSourcePoller } from "../../src/watch/poller.js";
import type { Paginate } from "../../src/watch/fetch-window.js";
import type { Config } from "../../src/config/index.js";
import { fourSourcesConfig } from "../helpers/four-sources-config.js";
import { configFromText, quietCommon, schedulesOf } from "../helpers/harness.js";
import { fakeClock, usePostgres } from "../store/postgres/pg-fixtures.js";

/**
 * A lease that ends while a tick of its source is in flight ends the tick before its next
 * explorer request (issue 15: "no source polled by two replicas for the same window").
 * Before, the engine asked holds() once per tick: a replica that shed a source (another had
 * joined) or whose lease lapsed went on fetching the window in flight, and the replica that
 * took the source over fetched the same window again. Replicas here are two engines in one
 * process on one PostgreSQL, each with a fake clock; the shed happens from inside the first
 * replica's explorer call, so nothing depends on timing. (The lease's signal itself, shed,
 * lost and lapsed: test/store/postgres/lease-keeper.test.ts.)
 */
const pg = usePostgres();
const LEASE_MS = 9_000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A simulator (its chain grows only when a test mines), a database, and the four sources from 40 blocks back. */
async function world(): Promise<{ sim: Simulator; url: string; start: number; config: Config; keys: string[] }> {
  const sim = await createSimulator({ seed: 15, initialBlocks: 60 });
  cleanups.push(() => sim.close());
  const start = sim.head() - 40;
  const config = configFromText(fourSourcesConfig(sim, { store: "{ path: unused.json }", defaults: `start: ${start}, max_window_blocks: 5` }));
  return { sim, url: await pg.database(), start, config, keys: planFromConfig(config).sources.map((source) => source.key) };
}

interface Replica {
  id: string;
  keeper: Ownership;
  engine: WatchEngine;
  clock: ReturnType<typeof fakeClock>;
}

/**
 * One replica: its own store connection, lease keeper, explorer client and engine. `before`
 * runs before each window's explorer call of a source (its key and the window's first block),
 * inside the tick, as a slow explorer would give another replica time to act.
 */
async function replica(sim: Simulator, url: string, config: Config, id: string, before?: (key: string, from: number) => Promise<void>): Promise<Replica> {
  const clock = fakeClock(Date.now());
  const common: Common = quietCommon({ now: clock.now });
  const store = await pg.open(url, { replicaId: id, leaseMs: LEASE_MS }, common);
  const keeper = createLeaseKeeper(common, { leases: store.leases, replicaId: id, leaseMs: LEASE_MS });
  const client = createExplorerClient(common, { ...explorerOptionsOf(config), replicaId: id });
  cleanups.push(() => client.close());
  const plan = planFromConfig(config);
  const pollers = plan.sources.map((source) => {
    const paginate = paginateSource(client, source.definition, config.explorer.page_size);
    const hooked: Paginate = (range, signal) =>
      (async function* () {
        await before?.(source.key, range.from);
        yield* paginate(range, signal);
      })();
    return createSourcePoller(common, { source, store, paginate: hooked, normalize: NORMALIZERS[source.family], pageSize: config.explorer.page_size });
  });
  const engine = createWatchEngine(common, { pollers, schedules: schedulesOf(pollers), readHead: async () => sim.head(), jitterMs: 0, ownership: keeper });
  await store.leases.register(plan.sources.map((source) => source.key));
  cleanups.push(() => engine.stop());
  return { id, keeper, engine, clock };
}

/** Windows of one source (operation and subject) that two replicas both asked the explorer for. */
function polledByBoth(polls: Poll[]): string[] {
  const doubles: string[] = [];
  for (const [i, later] of polls.entries()) {
    for (const earlier of polls.slice(0, i)) {
      if (earlier.replica === later.replica || earlier.op !== later.op || earlier.subject !== later.subject) continue;
      if (earlier.from === undefined || later.from === undefined || earlier.to! < later.from || later.to! < earlier.from) continue;
      doubles.push(`${later.op} ${later.subject} ${later.from}-${later.to}: ${earlier.replica} and ${later.replica}`);
    }
  }
  return doubles;
}

describe("a lease that ends during a tick", () => {
  it("shed for a replica that joined: the tick commits the window in flight and stops; the lease is released after it, and every window is polled once", async () => {
    const { sim, url, start, config, keys } = await world();
    // r1 sheds the last half of the sorted keys when r2 joins (down to the even share).
    const shedKeys = [...keys].sort().slice(keys.length / 2);
    const r2 = await replica(sim, url, config, "r2");
    let shedAt: number | undefined;
    const r1 = await replica(sim, url, config, "r1", async (key, from) => {
      // At the second window of the first shed source: r2 joins, r1 renews and sheds, r2 claims what is free.
      if (shedAt !== undefined || key !== shedKeys[0] || from === start + 1) return;
      shedAt = from;
      await r2.keeper.renewNow();
      await r1.keeper.renewNow();
      await r2.keeper.renewNow();
    });
    await r1.keeper.renewNow();
    for (const key of keys) expect(r1.keeper.holds(leaseResource({ source: key }))).toBeDefined();

    const first = await r1.engine.runOnce();
    expect(shedAt).toBeDefined();
    expect(first.results.filter((r) => r.error !== undefined)).toEqual([]);
    // The window in flight at the shed was committed; no other was started.
    expect(first.results.find((r) => r.key === shedKeys[0])?.result?.cursor).toBe(shedAt! + 4);
    for (const key of shedKeys) expect(r1.keeper.holds(leaseResource({ source: key })), key).toBeUndefined();
    // Still r1's while its ticks ran (nobody else could claim them); released at its next renewal.
    for (const key of shedKeys) expect(r2.keeper.holds(leaseResource({ source: key })), key).toBeUndefined();
    await r1.keeper.renewNow();
    await r2.keeper.renewNow();
    for (const key of shedKeys) expect(r2.keeper.holds(leaseResource({ source: key })), key).toBeDefined();

    const second = await r2.engine.runOnce();
    expect(second.results.filter((r) => r.result !== undefined).map((r) => r.key).sort()).toEqual(shedKeys);
    for (const r of second.results) if (r.result !== undefined) expect(r.result.cursor).toBe(sim.head());
    expect(polledByBoth(sim.truth.polls())).toEqual([]);
  });

  it("lapsed (its renewal came too late): the tick makes no further request, and the next tick goes on under the renewed lease", async () => {
    const { sim, url, start, config, keys } = await world();
    const sources = planFromConfig(config).sources;
    /** One source's requests: its operation on its address (the first of a poll's subject). */
    const polledFor = (key: string) => {
      const { definition } = sources.find((source) => source.key === key)!;
      return sim.truth.polls().filter((poll) => poll.op === definition.operation && poll.subject.split(" ")[0] === definition.address);
    };
    let lapsedAt: number | undefined;
    /** The explorer calls any source began after the lapse (each must send nothing). */
    const begunAfter: Array<{ key: string; from: number }> = [];
    const r1 = await replica(sim, url, config, "r1", async (key, from) => {
      if (lapsedAt !== undefined) {
        begunAfter.push({ key, from });
        return;
      }
      if (key !== keys[0] || from === start) return;
      lapsedAt = from;
      // The renewal comes after the usable time of the leases (a paused process, a slow
      // database): the work under them stops, though nobody took them over.
      r1.clock.advance(LEASE_MS - LEASE_MS / 3);
      await r1.keeper.renewNow();
    });
    await r1.keeper.renewNow();
    const polls = () => sim.truth.polls().filter((poll) => poll.from !== undefined).length;

    const first = await r1.engine.runOnce();
    expect(lapsedAt).toBeDefined();
    // Quietly, as a fenced commit: the window in flight is left for the next tick.
    expect(first.results.filter((r) => r.error !== undefined)).toEqual([]);
    expect(first.results.find((r) => r.key === keys[0])?.result?.cursor).toBe(lapsedAt! - 1);
    const before = polls();
    // The lapsed source asked for its first window only, and began nothing after the lapse.
    expect(polledFor(keys[0]!).map((poll) => poll.from)).toEqual([start]);
    expect(begunAfter.filter((call) => call.key === keys[0])).toEqual([]);
    // The lapse ended every lease of r1 at once. Whether another source's call in flight had
    // reached the explorer by then is a race; a call it began after the lapse sent nothing.
    expect(begunAfter.filter((call) => polledFor(call.key).some((poll) => poll.from === call.from))).toEqual([]);

    const second = await r1.engine.runOnce();
    expect(second.results.find((r) => r.key === keys[0])?.result?.cursor).toBe(sim.head());
    expect(polls()).toBeGreaterThan(before);
  });
});
