/**
 * Catch-up at the request budget: a wallet's internal transactions through operation 8 (one
 * request per block), 1,000 blocks behind, over an explorer whose answers come 0–200 ms late
 * (uniformly at random, so out of order). Figure: blocks per second against the client's
 * `requests_per_second`, at 20 and 50 requests a second. Target: at least 0.8 of the rate.
 *
 * Baseline in the same run: the same daemon asking for one block at a time (what it did
 * before: 9.6 blocks a second at 50 requests a second allowed), over fewer blocks.
 *
 * Then the explorer's own limit below the client's (40 against 50 requests a second): it
 * answers 429 with Retry-After, which holds every request in flight; blocks a second
 * against the explorer's 40, and the 429s it answered.
 *
 * The daemon is createDaemon + engine.runOnce() in this process (the catch-up a restart
 * after downtime runs); the simulator runs in a process of its own, as the real explorer is
 * remote. `--quick`: 300 blocks; `--smoke`: 30.
 */
import { createTestCommon } from "../src/common/common.js";
import { createDaemon } from "../src/daemon/create-daemon.js";
import { blocksInFlightFor } from "../src/watch/fetch-window.js";
import { report, type BenchFigure } from "./lib.js";
import { quick, sized } from "./mode.js";
import { startSimulatorProcess } from "./simulator-process.js";
import { configOf, loadNote, round, tempDir } from "./support.js";

const START_BLOCK = 100_000_000;
const BLOCKS = sized(1000, 300, 30);
const BASELINE_BLOCKS = sized(200, 60, 10);
const RATES = sized([20, 50], [50], [50]);
const JITTER_MS = 200;
const TARGET = 0.8;
/** The explorer's own limit in the last run, below the client's 50. */
const EXPLORER_LIMIT = 40;
const LIMITED_BLOCKS = sized(500, 200, 30);

const sim = await startSimulatorProcess({ seed: 11, startBlock: START_BLOCK, initialBlocks: BLOCKS + 1, faults: { latencyJitterMs: JITTER_MS } });
const limitedSim = await startSimulatorProcess({ seed: 11, startBlock: START_BLOCK, initialBlocks: BLOCKS + 1, faults: { latencyJitterMs: JITTER_MS }, requestsPerSecond: EXPLORER_LIMIT });
const head = await sim.head();

interface Run {
  rate: number;
  blocksInFlight: number;
  blocks: number;
  seconds: number;
  requests: number;
  records: number;
  alerts: number;
  /** Answers 429 (the explorer's own rate limit). */
  limited: number;
}

/** The daemon catching up `blocks` blocks behind the head, at `rate` requests a second. */
async function catchUp(rate: number, blocks: number, blocksInFlight?: number, explorer = sim): Promise<Run> {
  const dir = tempDir("kaiawatch-bench-catch-up-");
  try {
    const config = configOf({
      explorer: { base_url: explorer.url, requests_per_second: rate },
      chain: { rpc_url: explorer.rpcUrl, lag_blocks: 0 },
      store: { path: `${dir.path}/store.json` },
      status: { listen: false },
      // `start` is the first block read: `blocks` blocks up to the head.
      defaults: { start: head - blocks + 1, jitter: "0s" },
      watches: [{ name: "wallet", account: explorer.addresses.busyWallet, sources: ["internal_transactions"] }],
      rules: [{ name: "calls", watch: "wallet", source: "internal_transactions", when: { amount: { gte: "100 KAIA" } }, notify: ["out"] }],
      sinks: { out: { type: "file", path: `${dir.path}/alerts.jsonl` } },
    });
    const daemon = await createDaemon(createTestCommon(), { config, blocksInFlight });
    try {
      const operations = daemon.plan.sources.map((s) => s.definition.operation);
      if (operations.join() !== "blockInternalTransactions") throw new Error(`the plan reads ${operations.join(", ")}, not operation 8 alone`);
      await explorer.resetStats();
      const started = performance.now();
      const { results } = await daemon.engine.runOnce();
      const seconds = (performance.now() - started) / 1000;
      const failed = results.find((r) => r.error !== undefined);
      if (failed) throw new Error(`${failed.key}: ${failed.error}`);
      const cursor = results[0]?.result?.cursor;
      if (cursor !== head) throw new Error(`the cursor reached ${cursor}, not the head ${head}`);
      const stats = await explorer.stats();
      const requests = Object.entries(stats.requests).filter(([op]) => op !== "rpc").reduce((n, [, byStatus]) => n + Object.values(byStatus).reduce((a, b) => a + b, 0), 0);
      const limited = stats.requests.blockInternalTransactions?.["429"] ?? 0;
      return { rate, blocksInFlight: blocksInFlight ?? blocksInFlightFor(rate), blocks, seconds, requests, records: results[0]?.result?.records ?? 0, alerts: (await daemon.store.stats()).outbox, limited };
    } finally {
      await daemon.stop();
    }
  } finally {
    dir.remove();
  }
}

const runs: Run[] = [];
const baselines: Run[] = [];
for (const rate of RATES) {
  // The baseline first: the simulator's caches are warm for both alike after it.
  baselines.push(await catchUp(rate, BASELINE_BLOCKS, 1));
  runs.push(await catchUp(rate, BLOCKS));
}
const limited = await catchUp(50, LIMITED_BLOCKS, undefined, limitedSim);
const load = loadNote("when the run ended");
await sim.close();
await limitedSim.close();

const figures: BenchFigure[] = [];
for (const [i, run] of runs.entries()) {
  const baseline = baselines[i] as Run;
  const perSecond = run.blocks / run.seconds;
  const baselinePerSecond = baseline.blocks / baseline.seconds;
  const ratio = perSecond / run.rate;
  figures.push(
    { name: `${run.rate} requests/s allowed: blocks/s, ${run.blocksInFlight} blocks in flight`, value: round(perSecond, 1), unit: "blocks/s", baseline: run.rate },
    { name: `${run.rate} requests/s: blocks/s / requests/s allowed`, value: round(ratio, 3), unit: "ratio", baseline: 1, target: `≥ ${TARGET}`, ok: ratio >= TARGET },
    { name: `${run.rate} requests/s: one block at a time (before)`, value: round(baselinePerSecond, 1), unit: "blocks/s", baseline: run.rate },
    { name: `${run.rate} requests/s: one block at a time / requests/s allowed`, value: round(baselinePerSecond / run.rate, 3), unit: "ratio", baseline: 1 },
    { name: `${run.rate} requests/s: time to catch up ${run.blocks} blocks`, value: round(run.seconds, 1), unit: "s" },
    { name: `${run.rate} requests/s: explorer requests (one per block)`, value: run.requests, unit: "requests", baseline: run.blocks },
  );
}
const limitedPerSecond = limited.blocks / limited.seconds;
figures.push(
  { name: `explorer limiting at ${EXPLORER_LIMIT}/s, client at 50/s: blocks/s`, value: round(limitedPerSecond, 1), unit: "blocks/s", baseline: EXPLORER_LIMIT },
  { name: `explorer limiting at ${EXPLORER_LIMIT}/s: blocks/s / the explorer's limit`, value: round(limitedPerSecond / EXPLORER_LIMIT, 3), unit: "ratio", baseline: 1 },
  { name: `explorer limiting at ${EXPLORER_LIMIT}/s: 429 answers (Retry-After: 1 s, every request held)`, value: limited.limited, unit: "answers", baseline: limited.requests },
);
report(
  "catch-up",
  figures,
  [
    `${BLOCKS.toLocaleString("en-US")} blocks behind the head (baseline: ${BASELINE_BLOCKS}), the simulator's default density (seed 11; ${runs[0]?.records ?? 0} internal transactions of the watched wallet, ${runs[0]?.alerts ?? 0} alerts in the first run); every answer delayed 0–${JITTER_MS} ms, uniformly at random (latencyJitterMs), so answers come back out of order.`,
    "One account watch of internal transactions on the FREE plan: the planner reads it through operation 8 (checked), one request per block. createDaemon + engine.runOnce() on a fresh store whose cursor starts that many blocks back, as a restart after downtime; lag_blocks 0.",
    `In flight: blocksInFlightFor(requests_per_second), a second's worth of requests (at most 64), the rate limiter spacing them; before, one block at a time (blocksInFlight 1), whose rate is one block per answer time.`,
    `Last: ${LIMITED_BLOCKS} blocks from a simulator limiting at ${EXPLORER_LIMIT} requests a second (a token bucket of ${EXPLORER_LIMIT}), the client at 50: the 429's Retry-After (1 s) pauses the client's rate limiter, so every request in flight waits it out instead of being told again; the baseline of that row is the explorer's limit, and of the 429 row all requests sent.`,
    "The simulators run in processes of their own (tsx); kaiawatch in this one.",
    load,
  ],
  { write: !quick },
);
