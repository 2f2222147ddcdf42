import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { Simulator } from "../../src/simulator/index.js";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { configFromText, quietCommon, recordKeyOf, repeated, tempDir } from "../helpers/harness.js";
import { startSimulator } from "../simulator/start.js";

/**
 * Guarantees 1 and 2 against the simulator's ground truth: every record of every block a
 * cursor passed became exactly one alert of each rule that matches everything.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  sim: Simulator;
  start: number;
  pageSize?: number;
  maxWindow?: number;
  maxRetries?: number;
  rps?: number;
  watches?: string;
  rules?: string;
  /** Where the explorer stops counting (the simulator's and the daemon's, together); 40,000 by default. */
  countCap?: number;
}

function configText(setup: Setup, storePath: string): string {
  const { sim } = setup;
  return `
explorer:
  base_url: ${sim.url}
  requests_per_second: ${setup.rps ?? 1000}
  page_size: ${setup.pageSize ?? 2000}
  max_retries: ${setup.maxRetries ?? 5}
chain:
  rpc_url: ${sim.rpcUrl}
  lag_blocks: 0
store: { path: ${storePath} }
status: { listen: false }
defaults: { start: ${setup.start}, max_window_blocks: ${setup.maxWindow ?? 1000}, jitter: 0s }
watches:
${setup.watches ?? `  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [nft_transfers, internal_transactions], via: own }
  - { name: token, contract: "${sim.addresses.busyToken}" }
  - { name: collection, collection: "${sim.addresses.busyCollection}" }`}
rules:
${setup.rules ?? `  - { name: wallet-nft, watch: wallet, source: nft_transfers, notify: [out] }
  - { name: wallet-calls, watch: wallet, source: internal_transactions, notify: [out] }
  - { name: token-logs, watch: token, notify: [out] }
  - { name: collection-transfers, watch: collection, notify: [out] }`}
sinks:
  out: { type: file, path: ${join(storePath, "..", "alerts.jsonl")} }
`;
}

async function daemonFor(setup: Setup): Promise<Daemon> {
  const dir = tempDir();
  const config = configFromText(configText(setup, join(dir.path, "store.json")));
  const daemon = await createDaemon(quietCommon(), { config, countCap: setup.countCap });
  cleanups.push(async () => {
    await daemon.stop();
    dir.remove();
  });
  return daemon;
}

function keysByRule(entries: OutboxEntry[]): Map<string, string[]> {
  const byRule = new Map<string, string[]>();
  for (const entry of entries) {
    const keys = byRule.get(entry.rule) ?? [];
    keys.push(recordKeyOf(entry.alert));
    byRule.set(entry.rule, keys);
  }
  return byRule;
}

function expectExactly(actual: string[] | undefined, truth: string[]): void {
  expect(repeated(actual ?? [])).toEqual([]);
  expect(new Set(actual ?? [])).toEqual(new Set(truth));
  expect(actual?.length ?? 0).toBe(truth.length);
}

function truthOf(sim: Simulator, from: number, to: number) {
  const { busyWallet, busyToken, busyCollection } = sim.addresses;
  return {
    "wallet-nft": sim.truth.accountNftTransfers(busyWallet, { from, to }).map((r) => NORMALIZERS.nft_transfers(r).key),
    "wallet-calls": sim.truth.accountInternalTransactions(busyWallet, { from, to }).map((r) => NORMALIZERS.internal_transactions(r).key),
    "token-logs": sim.truth.accountEventLogs(busyToken, { from, to }).map((r) => NORMALIZERS.event_logs(r).key),
    "collection-transfers": sim.truth.nftTransfers(busyCollection, { from, to }).map((r) => NORMALIZERS.nft_transfers(r).key),
  };
}

async function expectMatchesTruth(daemon: Daemon, sim: Simulator, from: number, to: number): Promise<void> {
  const byRule = keysByRule((await daemon.store.listOutbox()));
  const truth = truthOf(sim, from, to);
  for (const [rule, keys] of Object.entries(truth)) {
    expect(keys.length, `the chain has records for ${rule}`).toBeGreaterThan(0);
    expectExactly(byRule.get(rule), keys);
  }
  for (const cursor of (await daemon.store.listCursors())) expect(cursor.block).toBe(to);
}

describe("watch engine against the simulator", () => {
  it("sees every record once although the API answers newest first, in small pages, while blocks keep arriving", async () => {
    const sim = await startSimulator({ seed: 11, initialBlocks: 400, blockTime: 5 });
    const start = sim.head() - 399;
    const daemon = await daemonFor({ sim, start, pageSize: 7, maxWindow: 150 });
    const { head, results } = await daemon.engine.runOnce();
    expect(results.every((r) => r.error === undefined)).toBe(true);
    expect(sim.head()).toBeGreaterThan(head);
    await expectMatchesTruth(daemon, sim, start, head);
  });

  it("catches up 5,000 blocks of downtime window after window without skipping", async () => {
    const sim = await startSimulator({ seed: 12, initialBlocks: 10, density: { eventLogs: 2, nftTransfers: 1, internalTransactions: 3 } });
    const start = sim.head() + 1;
    const daemon = await daemonFor({ sim, start });
    sim.mine(5_000);
    const { head, results } = await daemon.engine.runOnce();
    expect(results.every((r) => r.result!.windows >= 5)).toBe(true);
    await expectMatchesTruth(daemon, sim, start, head);
  });

  // The explorer stops counting at 40,000; here, with the simulator and the daemon told so, at
  // 400: the same paging and splitting over a hundredth of the records (it took 9 s at 40,000).
  it("pages a window of more records than a page and splits one of more than the explorer counts", async () => {
    const countCap = 400;
    const sim = await startSimulator({ seed: 13, initialBlocks: 5, countCap });
    const contract = sim.addresses.tokens[1]!;
    const start = sim.head() + 1;
    // 10 blocks of 45 logs each: 450 records in one window, more than the count cap and than four pages of 100.
    for (let block = 0; block < 10; block++) {
      sim.addBlock({ eventLogs: Array.from({ length: 45 }, () => ({ contract_address: contract })) });
    }
    const daemon = await daemonFor({
      sim,
      start,
      pageSize: 100,
      countCap,
      watches: `  - { name: dense, contract: "${contract}" }`,
      rules: `  - { name: dense-logs, watch: dense, notify: [out] }`,
    });
    const { head, results } = await daemon.engine.runOnce();
    expect(results[0]!.error).toBeUndefined();
    const keys = keysByRule((await daemon.store.listOutbox())).get("dense-logs");
    const truth = sim.truth.accountEventLogs(contract, { from: start, to: head }).map((r) => NORMALIZERS.event_logs(r).key);
    expect(truth.length).toBeGreaterThan(countCap);
    expectExactly(keys, truth);
    // Split, not paged past the count: the one window's chunks each stayed under the cap.
    const requests = sim.stats().requests;
    expect(requests.accountEventLogs?.["200"] ?? 0).toBeGreaterThan(Math.ceil(truth.length / 100));
    expect((await daemon.store.getCursor(daemon.plan.sources[0]!.key))!.block).toBe(head);
  });

  it("loses nothing when a fifth of the calls fail and the API rate-limits", async () => {
    const sim = await startSimulator({ seed: 14, initialBlocks: 200, faults: { serverErrorRate: 0.2, resetRate: 0.02 }, requestsPerSecond: 20 });
    const start = sim.head() - 199;
    const daemon = await daemonFor({ sim, start, pageSize: 25, maxRetries: 12, rps: 40 });
    const { head, results } = await daemon.engine.runOnce();
    expect(results.map((r) => r.error)).toEqual(results.map(() => undefined));
    const stats = sim.stats();
    expect(stats.faults.serverError ?? Object.values(stats.faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    await expectMatchesTruth(daemon, sim, start, head);
  }, 120_000);
});
