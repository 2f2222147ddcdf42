/**
 * Scale: 10,000 sources in one process, one tick over a quiet chain (one new block, no
 * records in it). Targets: one request per source plus one head read; one store write;
 * resident memory at most 200 MB. Then, with 10,000 alerts waiting in the outbox, the time
 * of one store write (target at most 50 ms).
 *
 * The simulator runs in a process of its own so that the memory and the time measured
 * are kaiawatch's alone; its counters give the requests.
 */
import { createTestCommon } from "../src/common/common.js";
import { createDaemon } from "../src/daemon/create-daemon.js";
import { ALERT_DOCUMENT_VERSION } from "../src/rules/alert.js";
import type { OutboxEntry } from "../src/store/types.js";
import type { SimulatorStats } from "../src/simulator/index.js";
import { report, type BenchFigure } from "./lib.js";
import { startSimulatorProcess } from "./simulator-process.js";
import { configOf, loadNote, median, round, seededRandom, tempDir } from "./support.js";

const SOURCES = 10_000;
const ALERTS = 10_000;
const WRITES = 20;
const MB = 1024 * 1024;

const random = seededRandom(0x5ca1e);
const address = () => `0x${Array.from({ length: 40 }, () => "0123456789abcdef"[Math.floor(random() * 16)]).join("")}`;

// A quiet chain: blocks without records.
const sim = await startSimulatorProcess({ seed: 3, initialBlocks: 10, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
const dir = tempDir("kaiawatch-bench-scale-");

// A quarter each: contracts (event logs), collections (NFT transfers), accounts with two
// sources (NFT transfers and internal transactions): 10,000 sources, one rule each.
const quarter = SOURCES / 4;
const watches: unknown[] = [];
const rules: unknown[] = [];
for (let i = 0; i < quarter; i++) {
  watches.push({ name: `c${i}`, contract: address() });
  rules.push({ name: `c${i}`, watch: `c${i}`, when: { event: "Transfer" }, notify: ["out"] });
  watches.push({ name: `n${i}`, collection: address() });
  rules.push({ name: `n${i}`, watch: `n${i}`, when: { mint: true }, notify: ["out"] });
  watches.push({ name: `a${i}`, account: address(), sources: ["nft_transfers", "internal_transactions"] });
  rules.push({ name: `a${i}-nft`, watch: `a${i}`, source: "nft_transfers", when: { direction: "in" }, notify: ["out"] });
  rules.push({ name: `a${i}-calls`, watch: `a${i}`, source: "internal_transactions", when: { amount: { gte: "1000 KAIA" } }, notify: ["out"] });
}
const configStarted = performance.now();
const config = configOf({
  explorer: { base_url: sim.url, requests_per_second: 100_000, page_size: 2000 },
  chain: { rpc_url: sim.rpcUrl, lag_blocks: 0 },
  store: { path: `${dir.path}/store.json` },
  status: { listen: false },
  defaults: { start: "latest", jitter: "0s" },
  watches,
  rules,
  sinks: { out: { type: "file", path: `${dir.path}/alerts.jsonl` } },
});
const configSeconds = (performance.now() - configStarted) / 1000;

const requestsOf = (stats: SimulatorStats) => {
  let api = 0;
  let rpc = 0;
  for (const [op, byStatus] of Object.entries(stats.requests)) {
    const n = Object.values(byStatus).reduce((a, b) => a + b, 0);
    if (op === "rpc") rpc += n;
    else api += n;
  }
  return { api, rpc, ok: Object.values(stats.requests).reduce((sum, byStatus) => sum + (byStatus["200"] ?? 0), 0) };
};

const daemonStarted = performance.now();
const daemon = await createDaemon(createTestCommon(), { config });
const daemonSeconds = (performance.now() - daemonStarted) / 1000;
if (daemon.plan.sources.length !== SOURCES) throw new Error(`planned ${daemon.plan.sources.length} sources, not ${SOURCES}`);

// The first tick only sets every cursor at the head (start: latest): no window to read.
const firstStarted = performance.now();
let writes = daemon.store.stats().writes;
await daemon.engine.runOnce();
const first = { seconds: (performance.now() - firstStarted) / 1000, writes: daemon.store.stats().writes - writes };

// The measured tick: one new, empty block for every source.
await sim.mine(1);
await sim.resetStats();
writes = daemon.store.stats().writes;
global.gc?.();
const tickStarted = performance.now();
const tick = await daemon.engine.runOnce();
const tickSeconds = (performance.now() - tickStarted) / 1000;
const tickWrites = daemon.store.stats().writes - writes;
const rssAfterTick = process.memoryUsage().rss;
const heapAfterTick = process.memoryUsage().heapUsed;
// What stays alive (npm run bench gives --expose-gc), and the resident size once V8 has collected.
global.gc?.();
const liveHeap = process.memoryUsage().heapUsed;
const committedHeap = process.memoryUsage().heapTotal;
const rssAfterGc = process.memoryUsage().rss;
const requests = requestsOf(await sim.stats());
const failed = tick.results.filter((r) => r.error !== undefined);
if (failed.length > 0) throw new Error(`${failed.length} sources failed, e.g. ${failed[0]?.key}: ${failed[0]?.error}`);
if (daemon.store.listCursors().some((c) => c.block !== tick.head)) throw new Error("a cursor did not reach the head");

// 10,000 alerts waiting in the outbox, then single writes (a cursor moving) timed one by one.
const now = new Date().toISOString();
const entries: OutboxEntry[] = Array.from({ length: ALERTS }, (_, i) => ({
  id: `bench-${i}:out`,
  sink: "out",
  rule: "c0",
  state: "pending",
  attempts: 0,
  created_at: now,
  next_attempt_at: now,
  alert: {
    version: ALERT_DOCUMENT_VERSION, id: `bench-${i}`, rule: "c0", watch: "c0", source: "event_logs", network: "kairos", block: tick.head, transaction_hash: `0x${"ab".repeat(32)}`,
    datetime: now, summary: `Transfer of 1.5 WKAIA from 0x… to 0x… (bench ${i})`, links: { transaction: "https://kairos.kaiascan.io/tx/0x…" }, record: { i, note: "x".repeat(400) }, created_at: now,
  },
}));
await daemon.store.enqueue(entries);
const cursor = daemon.store.listCursors()[0];
if (!cursor) throw new Error("no cursor");
const writeTimes: number[] = [];
for (let i = 0; i < WRITES; i++) {
  const started = performance.now();
  await daemon.store.setCursor({ ...cursor, block: cursor.block + i + 1, updated_at: new Date().toISOString() });
  writeTimes.push(performance.now() - started);
}
const storeBytes = daemon.store.stats().bytes;
const peakRss = process.resourceUsage().maxRSS * 1024;
const load = loadNote("when the run ended");
await daemon.stop();
await sim.close();
dir.remove();

const writeMedian = median(writeTimes);
const figures: BenchFigure[] = [
  { name: "sources", value: SOURCES, unit: "sources" },
  { name: "tick wall time", value: round(tickSeconds, 3), unit: "s" },
  { name: "explorer requests in the tick", value: requests.api, unit: "requests", target: `= ${SOURCES.toLocaleString("en-US")} (one per source)`, ok: requests.api === SOURCES },
  { name: "head reads in the tick", value: requests.rpc, unit: "requests", target: "= 1", ok: requests.rpc === 1 },
  { name: "store writes in the tick", value: tickWrites, unit: "writes", target: "= 1", ok: tickWrites === 1 },
  { name: "resident memory after the tick", value: round(rssAfterTick / MB, 1), unit: "MB", target: "≤ 200", ok: rssAfterTick / MB <= 200 },
  { name: "peak resident memory of the process", value: round(peakRss / MB, 1), unit: "MB", target: "≤ 200", ok: peakRss / MB <= 200 },
  { name: "heap used after the tick", value: round(heapAfterTick / MB, 1), unit: "MB" },
  ...(global.gc
    ? [
        { name: "live heap after the tick (after a full GC)", value: round(liveHeap / MB, 1), unit: "MB" },
        { name: "heap V8 keeps committed after that GC", value: round(committedHeap / MB, 1), unit: "MB" },
        { name: "resident memory after that GC", value: round(rssAfterGc / MB, 1), unit: "MB" },
      ]
    : []),
  { name: `store write with ${ALERTS.toLocaleString("en-US")} alerts waiting (median of ${WRITES})`, value: round(writeMedian, 1), unit: "ms", target: "≤ 50", ok: writeMedian <= 50 },
  { name: "slowest of those writes", value: round(Math.max(...writeTimes), 1), unit: "ms" },
  { name: "store file with those alerts", value: round(storeBytes / MB, 2), unit: "MB" },
  { name: "first tick (cursors set at the head): wall time", value: round(first.seconds, 3), unit: "s" },
  { name: "first tick: store writes", value: first.writes, unit: "writes" },
  { name: "config parse and check", value: round(configSeconds, 2), unit: "s" },
  { name: "createDaemon", value: round(daemonSeconds, 2), unit: "s" },
];
report("scale", figures, [
  `${SOURCES.toLocaleString("en-US")} sources: ${quarter} contracts (event logs), ${quarter} collections (NFT transfers), ${quarter} accounts with NFT transfers and internal transactions; one rule each; start: latest.`,
  "The tick is engine.runOnce() (one head read, then every source's tick side by side, as one firing of a shared schedule) after one new block without records; the requests are the simulator's own count; the client's rate limit is set to 100,000/s so that it does not bound the wall time (at a real plan's limit the tick is requests / requests_per_second long).",
  "Resident memory is this process's (kaiawatch and the benchmark's config of 10,000 watches), the simulator runs in another. Parsing the config (1.5 MB of YAML/JSON) takes ~160 MB of short-lived heap in the yaml library; V8 keeps much of that heap committed long after it is free, which is most of the gap between the live heap and the resident size.",
  `Store writes with ${ALERTS.toLocaleString("en-US")} pending alerts (about 1 KB each) and ${SOURCES.toLocaleString("en-US")} cursors: setCursor moving one cursor, each awaited until durable, one after another: serialisation, write, fsync, rename, directory fsync.`,
  "Before and after (this machine, November 2026): the tick took 29.7 s with 2 to 77 store writes (depending on timing), 473 MB resident after it (557 MB peak); checking the config took 8.5 s and createDaemon 9.2 s. The causes, fixed in src/: store.stats() listed every cursor and the poller reads it before each window (12 s of CPU); every explorer call added a listener to the shared shutdown signal, each add scanning the others (3.7 s); the client opened a connection per request in flight (10,000 sockets, the pool scanning them all); rules were looked up per watch by scanning (config and plan); every quiet window waited for a write of its own; every source ticked at once, holding a request each. Now: the numbers above. A store write with the 10,000 alerts measured 66 ms at load 4.8 before any change that touches it, 30 ms here: the machine's load, not the code.",
  "Not met: resident memory. The live heap after the tick is about 75 MB for kaiawatch (90 MB with this benchmark's own config arrays): per-source metrics (~15 MB for 10,000 label sets, a histogram each), compiled rules, pollers, child loggers (~4 MB), the config. The resident size is mostly heap V8 keeps committed after the config's parse, plus ~40 MB of the process itself; the real daemon (node dist/cli/bin.js run on the same config) measured 237 MB idle after start, 282 MB after the tick, 236 MB some 20 s later.",
  load,
]);
