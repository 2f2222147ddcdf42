/**
 * Cost: credits spent over an hour of simulated chain (3,600 one-second blocks) against the
 * theoretical minimum for the config. Target: ratio at most 1.02.
 *
 * The daemon's ticks are driven as its schedule would fire them: for a schedule of every
 * N seconds, N blocks are mined, then engine.runOnce() (one head read, every source's tick:
 * the same code a cron firing runs). Credits are the simulator's own count (2xx answers at
 * the spec's costs). The minimum is one request per window per source at the operation's
 * cost, plus one more per extra page when a window holds more than a page (from the
 * simulator's ground truth); planCredits' estimate for the hour is shown beside it.
 */
import { createTestCommon } from "../src/common/common.js";
import { createDaemon } from "../src/daemon/create-daemon.js";
import type { ExplorerSourceOperation } from "../src/watch/source.js";
import { OPERATIONS } from "../src/explorer/operations.js";
import { createSimulator, type Simulator } from "../src/simulator/index.js";
import { planCredits } from "../src/watch/credit-plan.js";
import { report, type BenchFigure } from "./lib.js";
import { configOf, loadNote, round, tempDir } from "./support.js";
import { runPlannerCost } from "./cost-planner.js";
import { quick, sized } from "./mode.js";

const BLOCKS = Number(process.env.COST_BLOCKS ?? sized(3600, 600, 20));
const PAGE_SIZE = 2000;
const SCHEDULES = [10, 1];
// An hour is what the target is about: a shorter run is printed, not written.
const write = !quick && BLOCKS === 3600;

interface Outcome {
  every: number;
  spent: number;
  minimum: number;
  planned: number;
  requests: number;
  minimumRequests: number;
  seconds: number;
  clientSpent: number;
  alerts: number;
}

async function hour(every: number): Promise<Outcome> {
  const sim = await createSimulator({ seed: 9, initialBlocks: 10 });
  const dir = tempDir("kaiawatch-bench-cost-");
  try {
    const a = sim.addresses;
    const transfer = "Transfer(address,address,uint256)";
    const config = configOf({
      explorer: { base_url: sim.url, requests_per_second: 100_000, page_size: PAGE_SIZE },
      chain: { rpc_url: sim.rpcUrl, lag_blocks: 0 },
      store: { path: `${dir.path}/store.json` },
      status: { listen: false },
      defaults: { schedule: every === 1 ? "* * * * * *" : `*/${every} * * * * *`, start: "latest", jitter: "0s" },
      watches: [
        { name: "token", contract: a.busyToken },
        { name: "token-transfers", contract: a.tokens[1], events: [transfer] },
        { name: "collection", collection: a.busyCollection },
        // Pinned to its own sources: this measures operation 7 beside 8, not the planner (cost-planner does).
        { name: "wallet", account: a.busyWallet, sources: ["nft_transfers", "internal_transactions"], via: "own" },
        { name: "blocks", every_block: true },
      ],
      rules: [
        // Alerting rules are selective: a few hundred alerts in the hour, as the outbox of a
        // daemon whose dispatcher is not running here would otherwise grow without end.
        { name: "token-whales", watch: "token", when: { event: "Transfer", "args.value": { gte: "10^25 base_units" } }, notify: ["out"] },
        { name: "token-transfers", watch: "token-transfers", when: { "args.value": { gte: "5 * 10^24 base_units" } }, notify: ["out"] },
        { name: "mints", watch: "collection", when: { mint: true, token_id: { lt: 20 } }, notify: ["out"] },
        { name: "wallet-in", watch: "wallet", source: "nft_transfers", when: { direction: "in", token_id: { lt: 2 } }, notify: ["out"] },
        { name: "wallet-big", watch: "wallet", source: "internal_transactions", when: { amount: { gte: "5000000 KAIA" } }, notify: ["out"] },
        { name: "reverts", watch: "blocks", when: { status: "Fail", amount: { gte: "1000000 KAIA" } }, notify: ["out"] },
      ],
      sinks: { out: { type: "file", path: `${dir.path}/alerts.jsonl` } },
    });
    const daemon = await createDaemon(createTestCommon(), { config });
    let alerts = 0;
    try {
      await daemon.engine.runOnce(); // start: latest sets every cursor at the head; no request
      sim.resetStats();
      const clientBefore = daemon.client.meter.spentToday();
      const startBlock = sim.head() + 1;
      const windows: Array<{ from: number; to: number }> = [];
      const started = performance.now();
      for (let mined = 0; mined < BLOCKS; mined += every) {
        const from = sim.head() + 1;
        sim.mine(every);
        windows.push({ from, to: sim.head() });
        const { results } = await daemon.engine.runOnce();
        const failed = results.find((r) => r.error !== undefined);
        if (failed) throw new Error(`${failed.key}: ${failed.error}`);
      }
      const seconds = (performance.now() - started) / 1000;
      const stats = sim.stats();
      const requests = Object.entries(stats.requests).filter(([op]) => op !== "rpc").reduce((n, [, byStatus]) => n + Object.values(byStatus).reduce((x, y) => x + y, 0), 0);
      const min = minimum(sim, windows, daemon.plan.sources.map((s) => s.definition));
      const planned = planCredits(config, { dayMs: Date.UTC(2026, 0, 5) }).creditsPerDay * (BLOCKS / 86_400);
      if (sim.head() - startBlock + 1 !== BLOCKS) throw new Error("mined the wrong number of blocks");
      alerts = (await daemon.store.stats()).outbox;

      return { every, alerts, spent: stats.creditsTotal, minimum: min.credits, planned, requests, minimumRequests: min.requests, seconds, clientSpent: daemon.client.meter.spentToday() - clientBefore };
    } finally {
      await daemon.stop();
    }
  } finally {
    await sim.close();
    dir.remove();
  }
}

type Definition = Awaited<ReturnType<typeof createDaemon>>["plan"]["sources"][number]["definition"];

/** One request per window (or per block for operation 8), plus one per extra page the window's records fill. */
function minimum(sim: Simulator, windows: Array<{ from: number; to: number }>, definitions: Definition[]): { credits: number; requests: number } {
  let credits = 0;
  let requests = 0;
  const pages = (records: number) => Math.max(1, Math.ceil(records / PAGE_SIZE));
  for (const d of definitions) {
    // No node source in this benchmark's configs: every definition is an explorer operation.
    const cost = OPERATIONS[d.operation as ExplorerSourceOperation].cost;
    for (const w of windows) {
      let n = 0;
      switch (d.operation) {
        case "accountEventLogs":
          n = pages(sim.truth.accountEventLogs(d.address!, { ...w, signature: d.signature }).length);
          break;
        case "nftTransfers":
          n = pages(sim.truth.nftTransfers(d.address!, { ...w, tokenId: d.tokenId }).length);
          break;
        case "accountNftTransfers":
          n = pages(sim.truth.accountNftTransfers(d.address!, { ...w, contractAddress: d.contractAddress }).length);
          break;
        case "accountInternalTransactions":
          n = pages(sim.truth.accountInternalTransactions(d.address!, w).length);
          break;
        case "blockInternalTransactions":
          for (let block = w.from; block <= w.to; block++) n += pages(sim.truth.blockInternalTransactions(block).length);
          break;
      }
      requests += n;
      credits += n * cost;
    }
  }
  return { credits, requests };
}

const outcomes: Outcome[] = [];
for (const every of SCHEDULES) outcomes.push(await hour(every));
const load = loadNote("when the run ended");

const figures: BenchFigure[] = outcomes.flatMap((o) => {
  const label = o.every === 1 ? "every second" : `every ${o.every} s`;
  const ratio = o.spent / o.minimum;
  return [
    { name: `schedule ${label}: credits spent over the hour`, value: o.spent, unit: "credits", baseline: o.minimum },
    { name: `schedule ${label}: spent / minimum`, value: round(ratio, 4), unit: "ratio", baseline: 1, target: "≤ 1.02", ok: ratio <= 1.02 },
    { name: `schedule ${label}: requests (minimum)`, value: o.requests, unit: "requests", baseline: o.minimumRequests },
    { name: `schedule ${label}: plan's estimate for the hour`, value: round(o.planned, 1), unit: "credits" },
    { name: `schedule ${label}: the client's own meter`, value: o.clientSpent, unit: "credits" },
    { name: `schedule ${label}: alerts made`, value: o.alerts, unit: "alerts" },
    { name: `schedule ${label}: time to run the hour`, value: round(o.seconds, 1), unit: "s" },
  ];
});
report("cost", figures, [
  `${BLOCKS.toLocaleString("en-US")} blocks (${BLOCKS === 3600 ? "an hour of Kaia" : "a short run, not the hour"}) of the simulator's default density (seed 9); six sources: a token's event logs (op 11, 3 credits), a token's Transfer logs by signature (op 11), a collection's transfers (op 4, 5), a wallet's NFT transfers (op 3, 3) and internal transactions (op 7, 20), every block's internal transactions (op 8, 1 per block); pages of ${PAGE_SIZE}.`,
  "Each firing of the schedule is one engine.runOnce() after as many blocks as the schedule's interval in seconds: what a cron firing runs (head read, then every source's tick), without waiting for the wall clock.",
  "Minimum: for each source, one request per window (operation 8: per block) at the operation's cost, one more per extra page a window's records fill (counted from the simulator's ground truth). The plan's estimate is planCredits() for a day times 3,600/86,400.",
  load,
], { write });

// The planner's choice on three configs, credits a day against an independent minimum.
runPlannerCost({ write });
