import { afterEach, describe, expect, it } from "vitest";
import type { Common } from "../../src/common/common.js";
import { explorerOptionsOf } from "../../src/daemon/explorer-options.js";
import { paginateSource } from "../../src/daemon/paginate-source.js";
import { createExplorerClient } from "../../src/explorer/client.js";
import { createSimulator, type Poll, type Simulator } from "../../src/simulator/index.js";
import { sourceResource, type Ownership } from "../../src/store/ownership.js";
import { createLeaseKeeper } from "../../src/store/postgres/lease-keeper.js";
import { createWatchEngine, type WatchEngine } from "../../src/watch/engine.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { createSourcePoller } from "../../src/watch/poller.js";
import type { Paginate } from "../../src/watch/fetch-window.js";
import type { Config } from "../../src/config/index.js";
import { configFromText, quietCommon } from "../helpers/harness.js";
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

function configOf(sim: Simulator, start: number): Config {
  return configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, page_size: 2000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: unused.json }
status: { listen: false }
defaults: { start: ${start}, max_window_blocks: 5, jitter: 0s }
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [nft_transfers, internal_transactions] }
  - { name: token, contract: "${sim.addresses.busyToken}" }
  - { name: collection, collection: "${sim.addresses.busyCollection}" }
rules:
  - { name: wallet-nft, watch: wallet, source: nft_transfers, notify: [out] }
  - { name: wallet-calls, watch: wallet, source: internal_transactions, notify: [out] }
  - { name: token-logs, watch: token, notify: [out] }
  - { name: collection-transfers, watch: collection, notify: [out] }
sinks:
  out: { type: webhook, url: "http://127.0.0.1:9/unused", allow_http: true }
`);
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
  const engine = createWatchEngine(common, { pollers, readHead: async () => sim.head(), jitterMs: 0, ownership: keeper });
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
  it("shed for a replica that joined: the shedding replica's tick stops before its next request, and the window is polled once, by the new holder", async () => {
    const sim = await createSimulator({ seed: 15, initialBlocks: 60 });
    cleanups.push(() => sim.close());
    const url = await pg.database();
    const config = configOf(sim, sim.head() - 40);
    const keys = planFromConfig(config).sources.map((source) => source.key);
    // r1 sheds the last half of the sorted keys when r2 joins (down to the even share).
    const shedKeys = [...keys].sort().slice(keys.length / 2);
    const r2 = await replica(sim, url, config, "r2");
    let shedAt: { key: string; from: number } | undefined;
    const r1 = await replica(sim, url, config, "r1", async (key, from) => {
      // At the second window of the first shed source: r2 joins, r1 renews and sheds, r2 claims.
      if (shedAt !== undefined || key !== shedKeys[0] || from === sim.head() - 40 + 1) return;
      shedAt = { key, from };
      await r2.keeper.renewNow();
      await r1.keeper.renewNow();
      await r2.keeper.renewNow();
    });
    await r1.keeper.renewNow();
    for (const key of keys) expect(r1.keeper.holds(sourceResource(key))).toBeDefined();

    const first = await r1.engine.runOnce();
    expect(shedAt).toBeDefined();
    // The shed ends r1's ticks quietly, as a fenced commit does: not an error.
    expect(first.results.filter((r) => r.error !== undefined)).toEqual([]);
    for (const key of shedKeys) expect(r1.keeper.holds(sourceResource(key)), key).toBeUndefined();
    for (const key of shedKeys) expect(r2.keeper.holds(sourceResource(key)), key).toBeDefined();
    const shedFirst = first.results.find((r) => r.key === shedKeys[0]);
    // It committed its first window and left the second, in flight at the shed, to r2.
    expect(shedFirst?.result?.cursor).toBe(shedAt!.from - 1);

    const second = await r2.engine.runOnce();
    expect(second.results.filter((r) => r.result !== undefined).map((r) => r.key).sort()).toEqual(shedKeys);
    for (const r of second.results) if (r.result !== undefined) expect(r.result.cursor).toBe(sim.head());
    expect(polledByBoth(sim.truth.polls())).toEqual([]);
  });
});
