/**
 * Scale: 10,000 sources in one process, one tick over a quiet chain (one new block, no
 * records in it). Targets: one request per source plus one head read; one store write;
 * resident memory at most 200 MB. Then, with 10,000 alerts waiting in the outbox, the time
 * of one store write (target at most 50 ms).
 *
 * Requests, writes and times come from a daemon built in this process (engine.runOnce()).
 * Resident memory comes from `kaiawatch run` itself, a process of its own started from
 * dist/ as users start it, read from /proc: this process also holds the benchmark's own
 * copy of the config and tsx. The simulator runs in a third process.
 */
import BetterSqlite3 from "better-sqlite3";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { stringify } from "yaml";
import type * as ConfigModule from "../src/config/index.js";
import type * as ConfigChecksModule from "../src/daemon/config-checks.js";
import { createTestCommon } from "../src/common/common.js";
import { createDaemon } from "../src/daemon/create-daemon.js";
import { ALERT_DOCUMENT_VERSION } from "../src/model/alert-document.js";
import type { OutboxEntry } from "../src/model/outbox-entry.js";
import type { SimulatorStats } from "../src/simulator/index.js";
import { report, type BenchFigure } from "./lib.js";
import { quick, sized, smoke } from "./mode.js";
import { startSimulatorProcess } from "./simulator-process.js";
import { buildDist, loadNote, median, round, seededRandom, tempDir } from "./support.js";

const SOURCES = sized(10_000, 10_000, 40);
const ALERTS = sized(10_000, 10_000, 100);
const WRITES = sized(20, 20, 3);
/** How long `kaiawatch run`'s memory is watched, and how often it ticks meanwhile (a block each time). */
const RUN_SECONDS = sized(20, 20, 2);
const RUN_EVERY_SECONDS = smoke ? 1 : 2;
const MB = 1024 * 1024;

const random = seededRandom(0x5ca1e);
const address = () => `0x${Array.from({ length: 40 }, () => "0123456789abcdef"[Math.floor(random() * 16)]).join("")}`;

// A quiet chain: blocks without records.
const sim = await startSimulatorProcess({ seed: 3, initialBlocks: 10, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
const dir = tempDir("kaiawatch-bench-scale-");

// A quarter each: contracts (event logs), collections (NFT transfers), accounts with two
// sources (NFT transfers and internal transactions): 10,000 sources, one rule each. The
// accounts are pinned to their own sources (via: own, operation 7 on PRO_PLUS): left to the
// planner, their internal transactions share one operation-8 source, and the benchmark would
// no longer tick 10,000 sources (the replicas benchmark measures that plan).
const quarter = SOURCES / 4;
const watches: unknown[] = [];
const rules: unknown[] = [];
for (let i = 0; i < quarter; i++) {
  watches.push({ name: `c${i}`, contract: address() });
  rules.push({ name: `c${i}`, watch: `c${i}`, when: { event: "Transfer" }, notify: ["out"] });
  watches.push({ name: `n${i}`, collection: address() });
  rules.push({ name: `n${i}`, watch: `n${i}`, when: { mint: true }, notify: ["out"] });
  watches.push({ name: `a${i}`, account: address(), sources: ["nft_transfers", "internal_transactions"], via: "own" });
  rules.push({ name: `a${i}-nft`, watch: `a${i}`, source: "nft_transfers", when: { direction: "in" }, notify: ["out"] });
  rules.push({ name: `a${i}-calls`, watch: `a${i}`, source: "internal_transactions", when: { amount: { gte: "1000 KAIA" } }, notify: ["out"] });
}
// The child ticks every 2 s so that its memory is seen over many ticks in a short run.
const configText = (store: string, schedule: string) =>
  stringify({
    explorer: { base_url: sim.url, requests_per_second: 100_000, page_size: 2000, api_plan: "PRO_PLUS" },
    chain: { rpc_url: sim.rpcUrl, lag_blocks: 0 },
    store: { path: store },
    status: { listen: false },
    defaults: { start: "latest", jitter: "0s", schedule },
    watches,
    rules,
    sinks: { out: { type: "file", path: `${dir.path}/alerts.jsonl` } },
  });
const configPath = `${dir.path}/kaiawatch.yaml`;
writeFileSync(configPath, configText(`${dir.path}/store.json`, "*/10 * * * * *"));
const runConfigPath = `${dir.path}/kaiawatch-run.yaml`;
writeFileSync(runConfigPath, configText(`${dir.path}/run-store.json`, RUN_EVERY_SECONDS === 1 ? "* * * * * *" : `*/${RUN_EVERY_SECONDS} * * * * *`));
const configBytes = statSync(configPath).size;
watches.length = 0;
rules.length = 0;
// From dist/, as `kaiawatch run` loads it: a file this large is parsed in a process of its own,
// which starts from compiled JavaScript.
const bin = buildDist();

const kib = (pid: number, field: "VmRSS" | "VmHWM") => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? Number.NaN) * 1024;
};
const until = async (what: string, condition: () => boolean, timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
/** Every cursor of the child's store at `block` (its last commit, read as another process sees it). */
const allCursorsAt = (store: string, block: number) => {
  if (!existsSync(store)) return false;
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(store, { readonly: true, fileMustExist: true });
    const blocks = (db.prepare("SELECT cursor FROM cursors").all() as Array<{ cursor: string }>).map((row) => (JSON.parse(row.cursor) as { block: number }).block);
    return blocks.length === SOURCES && blocks.every((b) => b === block);
  } catch {
    return false; // created but not yet committed: read again
  } finally {
    db?.close();
  }
};

/**
 * `kaiawatch run` with these node flags on the quiet chain: its resident memory after the
 * first tick that reads a window, the highest over 20 s of such ticks (a block and a tick
 * every 2 s, 10,000 requests each), and its peak (VmHWM, parsing the config included).
 */
async function measureRun(flags: string[]): Promise<{ afterTick: number; highest: number; peak: number }> {
  const store = `${dir.path}/run-store.json`;
  const child = spawn(process.execPath, [...flags, bin, "run", "--config", runConfigPath, "--log-level", "warn"], { stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    const pid = child.pid!;
    let head = await sim.mine(0);
    await until("the first tick (every cursor set at the head)", () => allCursorsAt(store, head));
    head = await sim.mine(1);
    await until("a quiet tick of every source", () => allCursorsAt(store, head));
    const afterTick = kib(pid, "VmRSS");
    let highest = afterTick;
    const end = Date.now() + RUN_SECONDS * 1000;
    let nextBlock = Date.now();
    while (Date.now() < end) {
      if (Date.now() >= nextBlock) {
        head = await sim.mine(1);
        nextBlock += RUN_EVERY_SECONDS * 1000;
      }
      highest = Math.max(highest, kib(pid, "VmRSS"));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await until("the last tick", () => allCursorsAt(store, head), 30_000);
    return { afterTick, highest, peak: kib(pid, "VmHWM") };
  } finally {
    child.kill("SIGTERM");
    await exited;
    for (const suffix of ["", "-wal", "-shm", ".lock"]) if (existsSync(store + suffix)) rmSync(store + suffix, { force: true });
  }
}
const plainRun = await measureRun([]);
const shippedRun = await measureRun(["--optimize-for-size"]);

const { loadConfig } = (await import(new URL("../dist/config/index.js", import.meta.url).href)) as typeof ConfigModule;
const { CONFIG_CHECKS } = (await import(new URL("../dist/daemon/config-checks.js", import.meta.url).href)) as typeof ConfigChecksModule;
const configStarted = performance.now();
const { config } = await loadConfig({ path: configPath, env: {}, checks: CONFIG_CHECKS });
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
let writes = (await daemon.store.stats()).writes;
await daemon.engine.runOnce();
const first = { seconds: (performance.now() - firstStarted) / 1000, writes: (await daemon.store.stats()).writes - writes };

// The measured tick: one new, empty block for every source.
await sim.mine(1);
await sim.resetStats();
writes = (await daemon.store.stats()).writes;
global.gc?.();
const tickStarted = performance.now();
const tick = await daemon.engine.runOnce();
const tickSeconds = (performance.now() - tickStarted) / 1000;
const tickWrites = (await daemon.store.stats()).writes - writes;
const heapAfterTick = process.memoryUsage().heapUsed;
// What stays alive (npm run bench gives --expose-gc), and the resident size once V8 has collected.
global.gc?.();
const liveHeap = process.memoryUsage().heapUsed;
const committedHeap = process.memoryUsage().heapTotal;
const requests = requestsOf(await sim.stats());
const failed = tick.results.filter((r) => r.error !== undefined);
if (failed.length > 0) throw new Error(`${failed.length} sources failed, e.g. ${failed[0]?.key}: ${failed[0]?.error}`);
if ((await daemon.store.listCursors()).some((c) => c.block !== tick.head)) throw new Error("a cursor did not reach the head");

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
const cursor = (await daemon.store.listCursors())[0];
if (!cursor) throw new Error("no cursor");
const writeTimes: number[] = [];
for (let i = 0; i < WRITES; i++) {
  const started = performance.now();
  await daemon.store.setCursor({ ...cursor, block: cursor.block + i + 1, updated_at: new Date().toISOString() });
  writeTimes.push(performance.now() - started);
}
const storeBytes = (await daemon.store.stats()).bytes;
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
  { name: "kaiawatch run (node's defaults): resident memory after a quiet tick", value: round(plainRun.afterTick / MB, 1), unit: "MB", target: "≤ 200", ok: plainRun.afterTick / MB <= 200 },
  { name: "kaiawatch run (node's defaults): highest over 20 s of ticks", value: round(plainRun.highest / MB, 1), unit: "MB" },
  { name: "kaiawatch run (node's defaults): peak, parsing the config included", value: round(plainRun.peak / MB, 1), unit: "MB" },
  { name: "kaiawatch run as shipped (node --optimize-for-size): resident memory after a quiet tick", value: round(shippedRun.afterTick / MB, 1), unit: "MB", target: "≤ 200", ok: shippedRun.afterTick / MB <= 200 },
  { name: "kaiawatch run as shipped: highest over 20 s of ticks", value: round(shippedRun.highest / MB, 1), unit: "MB", target: "≤ 200", ok: shippedRun.highest / MB <= 200 },
  { name: "kaiawatch run as shipped: peak, parsing the config included", value: round(shippedRun.peak / MB, 1), unit: "MB" },
  { name: "this process: heap used after the tick", value: round(heapAfterTick / MB, 1), unit: "MB" },
  ...(global.gc
    ? [
        { name: "this process: live heap after the tick (after a full GC)", value: round(liveHeap / MB, 1), unit: "MB" },
        { name: "this process: heap V8 keeps committed after that GC", value: round(committedHeap / MB, 1), unit: "MB" },
      ]
    : []),
  { name: `store write with ${ALERTS.toLocaleString("en-US")} alerts waiting (median of ${WRITES})`, value: round(writeMedian, 1), unit: "ms", target: "≤ 50", ok: writeMedian <= 50 },
  { name: "slowest of those writes", value: round(Math.max(...writeTimes), 1), unit: "ms" },
  { name: "store file with those alerts", value: round(storeBytes / MB, 2), unit: "MB" },
  { name: "first tick (cursors set at the head): wall time", value: round(first.seconds, 3), unit: "s" },
  { name: "first tick: store writes", value: first.writes, unit: "writes" },
  { name: `config parse and check (${round(configBytes / MB, 2)} MB of YAML)`, value: round(configSeconds, 2), unit: "s" },
  { name: "createDaemon", value: round(daemonSeconds, 2), unit: "s" },
];
report("scale", figures, [
  `${SOURCES.toLocaleString("en-US")} sources: ${quarter} contracts (event logs), ${quarter} collections (NFT transfers), ${quarter} accounts with NFT transfers and internal transactions; one rule each; start: latest.`,
  "The tick is engine.runOnce() in this process (one head read, then every source's tick, at most 64 at a time, as one firing of a shared schedule) after one new block without records; the requests are the simulator's own count; the client's rate limit is set to 100,000/s so that it does not bound the wall time (at a real plan's limit the tick is requests / requests_per_second long).",
  "Resident memory is that of `kaiawatch run` (node dist/cli/bin.js, a process of its own on the same config with a schedule of every 2 s), read from /proc: after its first tick that reads a window, the highest over the next 20 s (a new block and 10,000 requests every 2 s), and VmHWM. The peak is the config's parse: the YAML library needs ~190 MB of short-lived heap for this 1.7 MB file; it runs in a child process whose memory goes when the process exits.",
  "As shipped: the Dockerfile and examples/kaiawatch.service start node with --optimize-for-size, so that V8 keeps its heap close to what is alive. With node's defaults the heap grows to several times the live 55-60 MB between full collections. The flag's cost is CPU: the ingest benchmark's daemon path runs at about half its speed under it (--quick runs, November 2026: 222,624 -> 103,771 records/s; against its own ceiling, which the flag slows too, 0.80 -> 0.77), which kaiawatch has to spare: at the default requests_per_second of 5, pages of 2,000 records bring at most 10,000 records/s.",
  `Store writes with ${ALERTS.toLocaleString("en-US")} pending alerts (about 1 KB each) and ${SOURCES.toLocaleString("en-US")} cursors: setCursor moving one cursor, each awaited until durable, one after another: serialisation, write, fsync, rename, directory fsync.`,
  "Before and after, first round (this machine, November 2026): the tick took 29.7 s with 2 to 77 store writes (depending on timing), 473 MB resident after it (557 MB peak); checking the config took 8.5 s and createDaemon 9.2 s. The causes, fixed in src/: store.stats() listed every cursor and the poller reads it before each window (12 s of CPU); every explorer call added a listener to the shared shutdown signal, each add scanning the others (3.7 s); the client opened a connection per request in flight (10,000 sockets, the pool scanning them all); rules were looked up per watch by scanning (config and plan); every quiet window waited for a write of its own; every source ticked at once, holding a request each.",
  "Before and after, second round (resident memory; kaiawatch run with node's defaults, sampled every 2 s for 40-60 s, ticks every 10 s): 208-456 MB, growing ~50 MB a tick until a full collection, live heap 89 MB. Found with heap snapshots, --trace-gc and the sampling heap profiler (counting what survived the young generation): the yaml library's ~190 MB parse peak stayed committed (now parsed in a worker thread); a histogram per source (140,000 series, 15 MB; now per record family, plus a last-duration gauge per source); 10,000 pino child loggers (3.5 MB); 10,000 suspended async calls a firing waiting for a tick slot (now a queue of small entries); a new AbortController per explorer call (18 MB of old-generation garbage a tick; now one linked signal per caller's signal); five gauge samples set per source tick (now set when /metrics is scraped); objects built by spread, each with a hidden class of its own in V8 (32,000 hidden classes, ~8 MB; now written out). After: a live heap of 55-60 MB and the values above.",
  load,
], { write: !quick });
