import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { balanceResource } from "../../src/watch/balance-monitor.js";
import { configFromText, quietCommon } from "../helpers/harness.js";
import { recording } from "../notify/dispatcher-fixtures.js";
import { fakeClock, usePostgres } from "../store/postgres/pg-fixtures.js";

/**
 * Reminders with replicas (issue 31, item 3): two daemons on one real PostgreSQL both run
 * every reading (runOnce, as their crons would, on one clock moved by the test); only the
 * holder of the balance watch's lease reads and reminds, so each reminder is queued once, and
 * when the holder stops the other goes on with the count where it was.
 */
const pg = usePostgres();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PAYER = "0x00000000000000000000000000000000000fee00";
const FUNDER = "0x00000000000000000000000000000000000f0f00";
const pay = (from: string, to: string, kaia: string) => ({ internalTransactions: [{ from, to, amount: kaia, type: "CALL", transaction_status: { status: "Success" } }] });

describe("reminders of a balance episode with two replicas (PostgreSQL)", () => {
  it("are queued once each whichever replica reads, and go on counting after a handover", async () => {
    const sim = await createSimulator({ seed: 12, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
    cleanups.push(() => sim.close());
    const url = await pg.database();
    const clock = fakeClock(Date.now());
    // Each replica's kaiawatch_balance_reads_total: only the holder reads.
    const reads = new Map<Daemon, () => Promise<number>>();
    const daemonOf = async (id: string): Promise<Daemon> => {
      const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 100000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { url: "${url}", replica_id: ${id}, lease: 60s }
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", jitter: 0s }
watches:
  - { name: payer, balance: ["${PAYER}"] }
rules:
  - { name: payer-low, watch: payer, notify: [out], repeat_interval: 1m, when: { balance: { lt: "100 KAIA" } } }
sinks:
  out: { type: webhook, url: "http://127.0.0.1:9/unused", allow_http: true }
`);
      const common = quietCommon({ now: clock.now });
      const daemon = await createDaemon(common, { config, sinks: { out: recording("out") } });
      reads.set(daemon, async () => (await common.metrics.balanceReads.get()).values.reduce((sum, value) => sum + value.value, 0));
      cleanups.push(() => daemon.stop());
      return daemon;
    };
    sim.addBlock(pay(FUNDER, PAYER, "99"));
    const replicas = [await daemonOf("r1"), await daemonOf("r2")];
    for (const r of replicas) await r.start();
    for (let i = 0; i < 2; i++) for (const r of replicas) await r.ownership.renewNow();
    const watch = balanceResource("payer");
    expect(replicas.filter((r) => r.ownership.holds(watch) !== undefined)).toHaveLength(1);
    const holder = replicas.find((r) => r.ownership.holds(watch) !== undefined)!;
    const other = replicas.find((r) => r !== holder)!;

    /** Both replicas make the reading of this moment, as their schedules would. */
    const readingAfter = async (ms: number, live: readonly Daemon[] = replicas) => {
      clock.advance(ms);
      for (const r of live) await r.ownership.renewNow();
      for (const r of live) await r.runOnce({ drainTimeoutMs: 5000 });
    };
    await readingAfter(0); // fires
    await readingAfter(30_000);
    await readingAfter(30_000); // reminder 1
    await readingAfter(60_000); // reminder 2
    expect(await reads.get(other)!()).toBe(0);
    expect(await reads.get(holder)!()).toBe(4);
    await holder.stop(); // gives the watch back at once
    await readingAfter(30_000, [other]); // the other takes it: not due yet
    await readingAfter(30_000, [other]); // reminder 3, by the other
    sim.addBlock(pay(FUNDER, PAYER, "1"));
    await readingAfter(10_000, [other]);
    await readingAfter(10_000, [other]); // clear_after 2: resolved

    const queued = (await other.store.listOutbox({ sink: "out" })).map((entry) => entry.alert);
    const episode = queued[0]!.id;
    expect(queued.map((alert) => [alert.id, alert.repeat, alert.episode_id])).toEqual([
      [episode, 0, episode],
      [`${episode}:repeat:1`, 1, episode],
      [`${episode}:repeat:2`, 2, episode],
      [`${episode}:repeat:3`, 3, episode],
      [`${episode}:resolved`, undefined, episode],
    ]);
  });
});
