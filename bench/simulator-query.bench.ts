/**
 * Queries against the simulator cost O(page), not O(chain): a chain of 1,000,000 records
 * answers first pages, deep pages and block-range-filtered pages about as fast as a small
 * chain. Each figure is the median over many requests through real HTTP, with the small
 * chain measured in the same run as the baseline.
 */
import { request } from "undici";
import { OPERATIONS } from "../src/explorer/operations.js";
import { createSimulator, type Simulator } from "../src/simulator/index.js";
import { report, type BenchFigure } from "./lib.js";
import { quick, sized } from "./mode.js";

const TARGET_RECORDS = sized(1_000_000, 1_000_000, 8_000);
const SMALL_RECORDS = sized(20_000, 20_000, 2_000);
const REPEAT = sized(40, 40, 3);
const WARMUP = sized(20, 20, 2);
const START_BLOCK = 100_000_000;
const DENSITY = { eventLogs: 24, nftTransfers: 8, internalTransactions: 30 };

function path(op: keyof typeof OPERATIONS, params: Record<string, string | number>, query: Record<string, string | number> = {}): string {
  const p = OPERATIONS[op].path.replace(/:([A-Za-z]+)/g, (_, n: string) => String(params[n]));
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return `${p}?${qs}`;
}

async function median(sim: Simulator, p: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < REPEAT + WARMUP; i++) {
    const t0 = performance.now();
    const res = await request(`${sim.url}${p}`);
    const body = await res.body.text();
    const t = performance.now() - t0;
    if (res.statusCode !== 200) throw new Error(`${p}: ${res.statusCode} ${body.slice(0, 200)}`);
    if (i >= WARMUP) times.push(t); // the first ones warm the JIT and the connection
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

/** The queries, shaped to the chain: deep pages go as deep as the 40,000 cap allows. */
function queries(sim: Simulator): [string, string][] {
  const a = sim.addresses;
  const head = sim.head();
  const mid = Math.floor((START_BLOCK + head) / 2);
  const range = { blockNumberStart: mid - 499, blockNumberEnd: mid + 500 };
  const inRange = sim.truth.accountEventLogs(a.busyToken, { from: range.blockNumberStart, to: range.blockNumberEnd }).length;
  const all = sim.truth.accountInternalTransactions(a.busyWallet, { from: 0, to: head }).length;
  const deepPage = Math.max(1, Math.ceil(Math.min(all, 40_000) / 20));
  const deepRangePage = Math.max(1, Math.ceil(Math.min(inRange, 40_000) / 100));
  return [
    ["account internal txs, first page (size 20)", path("accountInternalTransactions", { accountAddress: a.busyWallet }, { size: 20 })],
    ["account internal txs, deepest page (size 20)", path("accountInternalTransactions", { accountAddress: a.busyWallet }, { size: 20, page: deepPage })],
    ["account event logs, 1,000-block range, first page (size 100)", path("accountEventLogs", { accountAddress: a.busyToken }, { ...range, size: 100 })],
    ["account event logs, 1,000-block range, last page (size 100)", path("accountEventLogs", { accountAddress: a.busyToken }, { ...range, size: 100, page: deepRangePage })],
    ["NFT transfers of a collection, 1,000-block range (size 100)", path("nftTransfers", { tokenAddress: a.busyCollection }, { ...range, size: 100 })],
    ["block internal txs, a middle block", path("blockInternalTransactions", { blockNumber: mid })],
  ];
}

async function build(records: number): Promise<{ sim: Simulator; seconds: number }> {
  const t0 = performance.now();
  const sim = await createSimulator({ seed: 42, startBlock: START_BLOCK, initialBlocks: 0, density: DENSITY });
  while (sim.truth.recordCount() < records) sim.mine(100);
  return { sim, seconds: (performance.now() - t0) / 1000 };
}

const small = await build(SMALL_RECORDS);
const smallQueries = queries(small.sim);
const baseline: number[] = [];
for (const [, p] of smallQueries) baseline.push(await median(small.sim, p));
await small.sim.close();

const big = await build(TARGET_RECORDS);
const heapMiB = Math.round(process.memoryUsage().heapUsed / 2 ** 20);
const figures: BenchFigure[] = [
  { name: "records in the large chain", value: big.sim.truth.recordCount(), unit: "records" },
  { name: "blocks in the large chain", value: big.sim.head() - START_BLOCK + 1, unit: "blocks" },
  { name: "build time of the large chain", value: big.seconds, unit: "s" },
  { name: "heap after building", value: heapMiB, unit: "MiB" },
];
const bigQueries = queries(big.sim);
for (let i = 0; i < bigQueries.length; i++) {
  const [name, p] = bigQueries[i] as [string, string];
  const ms = await median(big.sim, p);
  const base = baseline[i] as number;
  figures.push({ name: `${name}: median`, value: ms, unit: "ms", baseline: base });
  figures.push({ name: `${name}: large / small`, value: ms / base, unit: "ratio", target: "< 3 (O(page), not O(chain))", ok: ms / base < 3 });
}
await big.sim.close();

report("simulator-query", figures, [
  `Large chain: seed 42, density ${JSON.stringify(DENSITY)} records per block; baseline: the same density grown to ${small.sim.truth.recordCount().toLocaleString("en-US")} records.`,
  `Each median is over ${REPEAT} sequential HTTP requests (undici, keep-alive) after ${WARMUP} warm-up requests; times include JSON serialization and the loopback round trip.`,
  "Deep pages are the deepest the 40,000 total_count cap allows.",
], { write: !quick });
