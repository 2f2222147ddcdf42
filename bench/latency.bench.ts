/**
 * Latency: from a block's production to its webhook's arrival at a local receiver, p50 and
 * p99 over 300 blocks, for three pollers in the same run, each over its own simulator (the
 * same seed; every block is appended to the three at the same moment) and its own receiver
 * path:
 * - head: `kaiawatch run` with `schedule: head`, the head read every 100 ms (chain.head_interval);
 * - bare (the baseline): bench/latency-baseline.ts, a loop that reads the head at the same
 *   interval, fetches the new blocks' window and posts each record, nothing else;
 * - every second: `kaiawatch run` with the schedule "* * * * * *" (before `head`).
 * Targets: head p99 ≤ 1.5 × bare p99, head p50 ≤ 100 ms; at most one explorer request
 * (3 credits) per new block, what every second costs at a block a second (the simulators'
 * own counts), and credits per hour of each.
 *
 * kaiawatch is the real thing (`node dist/cli/bin.js run`, processes of their own); the
 * simulators and the receiver run here, so one clock times both ends. Every block holds one
 * Transfer of the watched token, which the rule matches; lag_blocks 0 and jitter 0. The real
 * chain's blocks come at no fixed phase with the wall clock's seconds, on which a schedule
 * fires; so that the figures cover every phase, blocks are spaced 1 s + 1/N s apart and
 * their phase sweeps the whole second over the N blocks.
 *
 * `--quick` (or LATENCY_BLOCKS=N): fewer blocks, printed but not written to bench/results/.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { createSimulator, type Simulator } from "../src/simulator/index.js";
import { report } from "./lib.js";
import { quick, sized } from "./mode.js";
import { buildDist, loadNote, median, percentile, round, tempDir } from "./support.js";

const BLOCKS = Number(process.env.LATENCY_BLOCKS ?? sized(300, 30, 3));
const WARMUP_BLOCKS = sized(5, 5, 1);
const HEAD_INTERVAL_MS = 100;
const TARGET_P50_MS = 100;
const TARGET_P99_RATIO = 1.5;
const BIN = buildDist();

const CONTENDERS = ["head", "bare", "second"] as const;
type Contender = (typeof CONTENDERS)[number];

const sims = {} as Record<Contender, Simulator>;
for (const name of CONTENDERS) sims[name] = await createSimulator({ seed: 4, initialBlocks: 10, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
const token = sims.head.addresses.busyToken;

const producedAt = new Map<number, number>();
const arrivedAt = Object.fromEntries(CONTENDERS.map((name) => [name, new Map<number, number>()])) as Record<Contender, Map<number, number>>;
const receiver = createServer((req, res) => {
  const at = performance.now();
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const name = (req.url ?? "").slice(1) as Contender;
    const alert = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { block: number };
    const arrived = arrivedAt[name];
    if (arrived && !arrived.has(alert.block)) arrived.set(alert.block, at);
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const dir = tempDir("kaiawatch-bench-latency-");
function kaiawatch(name: Contender, schedule: string): ChildProcess {
  const sim = sims[name];
  const configPath = `${dir.path}/${name}.yaml`;
  writeFileSync(
    configPath,
    `explorer:
  base_url: ${sim.url}
  requests_per_second: 10
chain:
  rpc_url: ${sim.rpcUrl}
  lag_blocks: 0
  head_interval: ${HEAD_INTERVAL_MS}ms
store: { path: ${dir.path}/${name}-store.json }
status: { listen: false }
log: { level: warn }
defaults: { schedule: "${schedule}", start: latest, jitter: 0s }
watches:
  - { name: token, contract: "${token}" }
rules:
  - { name: transfers, watch: token, when: { event: Transfer }, notify: [hook] }
sinks:
  hook: { type: webhook, url: "${receiverUrl}/${name}", allow_http: true }
`,
  );
  return spawn(process.execPath, [BIN, "run", "--config", configPath], { stdio: ["ignore", "inherit", "inherit"] });
}
const children: Record<Contender, ChildProcess> = {
  head: kaiawatch("head", "head"),
  second: kaiawatch("second", "* * * * * *"),
  bare: spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./latency-baseline.ts", import.meta.url)), sims.bare.rpcUrl, sims.bare.url, token, `${receiverUrl}/bare`, String(HEAD_INTERVAL_MS)], { stdio: ["ignore", "inherit", "inherit", "ipc"] }),
};
const exits = Object.fromEntries(CONTENDERS.map((name) => [name, new Promise<number | null>((resolve) => children[name].once("exit", (code) => resolve(code)))])) as Record<Contender, Promise<number | null>>;
// Running once each has read the head (kaiawatch's first firing is at start).
while (CONTENDERS.some((name) => (sims[name].stats().requests.rpc?.["200"] ?? 0) === 0)) {
  for (const name of CONTENDERS) if (children[name].exitCode !== null) throw new Error(`${name} exited (${children[name].exitCode})`);
  await new Promise((resolve) => setTimeout(resolve, 20));
}
for (const name of CONTENDERS) sims[name].resetStats();

const spacing = 1000 + 1000 / BLOCKS;
const total = WARMUP_BLOCKS + BLOCKS;
const first = performance.now() + 500;
const measured: number[] = [];
for (let i = 0; i < total; i++) {
  const due = first + i * spacing;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
  let block = 0;
  for (const name of CONTENDERS) block = sims[name].addBlock({ eventLogs: [{}] });
  producedAt.set(block, performance.now());
  if (i >= WARMUP_BLOCKS) measured.push(block);
}
// The last blocks' webhooks: a tick and a delivery away.
const deadline = performance.now() + 10_000;
while (CONTENDERS.some((name) => measured.some((b) => !arrivedAt[name].has(b))) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
const seconds = (performance.now() - first) / 1000;
const credits = Object.fromEntries(CONTENDERS.map((name) => [name, sims[name].stats().creditsTotal])) as Record<Contender, number>;
const requests = Object.fromEntries(CONTENDERS.map((name) => [name, Object.values(sims[name].stats().requests.accountEventLogs ?? {}).reduce((a, b) => a + b, 0)])) as Record<Contender, number>;
const load = loadNote("when the run ended");
for (const name of CONTENDERS) children[name].kill("SIGTERM");
const codes = await Promise.all(CONTENDERS.map((name) => exits[name]));
receiver.close();
for (const name of CONTENDERS) await sims[name].close();
dir.remove();

const figuresOf = (name: Contender) => {
  const latencies = measured.filter((b) => arrivedAt[name].has(b)).map((b) => (arrivedAt[name].get(b) as number) - (producedAt.get(b) as number));
  return { p50: median(latencies), p99: percentile(latencies, 0.99), fastest: Math.min(...latencies), slowest: Math.max(...latencies), missing: measured.length - latencies.length };
};
const head = figuresOf("head");
const bare = figuresOf("bare");
const second = figuresOf("second");
const perHour = (n: number) => round((n / seconds) * 3600);
const p99Ratio = head.p99 / bare.p99;
const headPerBlock = requests.head / total;
const secondPerBlock = requests.second / total;
report(
  quick || BLOCKS !== 300 ? "latency-quick" : "latency",
  [
    { name: "schedule head: p50", value: round(head.p50), unit: "ms", baseline: round(bare.p50), target: `≤ ${TARGET_P50_MS}`, ok: head.p50 <= TARGET_P50_MS },
    { name: "schedule head: p99", value: round(head.p99), unit: "ms", baseline: round(bare.p99) },
    { name: "schedule head: p99 / bare p99", value: round(p99Ratio, 2), unit: "ratio", baseline: 1, target: `≤ ${TARGET_P99_RATIO}`, ok: p99Ratio <= TARGET_P99_RATIO },
    { name: "schedule head: fastest / slowest", value: round(head.fastest), unit: `ms / ${round(head.slowest)} ms` },
    { name: "bare poller (baseline): p50", value: round(bare.p50), unit: "ms" },
    { name: "bare poller (baseline): p99", value: round(bare.p99), unit: "ms" },
    { name: "schedule every second: p50", value: round(second.p50), unit: "ms", baseline: round(bare.p50) },
    { name: "schedule every second: p99", value: round(second.p99), unit: "ms", baseline: round(bare.p99) },
    { name: "credits per hour: schedule head", value: perHour(credits.head), unit: "credits/h", baseline: perHour(credits.second) },
    { name: "credits per hour: schedule every second", value: perHour(credits.second), unit: "credits/h" },
    { name: "credits per hour: bare poller", value: perHour(credits.bare), unit: "credits/h" },
    { name: "explorer requests per new block: schedule head", value: round(headPerBlock, 3), unit: `requests (${requests.head} for ${total} blocks)`, target: "≤ 1", ok: headPerBlock <= 1 },
    { name: "explorer requests per new block: schedule every second", value: round(secondPerBlock, 3), unit: `requests (${requests.second}; a firing that finds two new blocks asks once)` },
    { name: "credits: head / every second", value: round(credits.head / credits.second, 3), unit: "ratio", baseline: 1 },
    { name: "webhooks missing after 10 s (head, bare, every second)", value: head.missing + bare.missing + second.missing, unit: `blocks (${head.missing}, ${bare.missing}, ${second.missing})`, target: "0", ok: head.missing + bare.missing + second.missing === 0 },
  ],
  [
    `${BLOCKS} blocks after ${WARMUP_BLOCKS} unmeasured ones, ${round(spacing, 2)} ms apart (their phase against the wall clock's seconds sweeps the whole second); each holds one Transfer of the watched token. ${round(seconds, 1)} s measured.`,
    `Three pollers side by side, each over its own simulator (seed 4; every block appended to the three at once) and its own receiver path on 127.0.0.1 (plain http, 204): kaiawatch run with schedule head and chain.head_interval ${HEAD_INTERVAL_MS}ms; the bare baseline (bench/latency-baseline.ts: eth_blockNumber every ${HEAD_INTERVAL_MS} ms, one operation-11 request for the new blocks, one POST per record, nothing else); kaiawatch run with schedule every second. Both kaiawatch runs: compiled dist/, lag_blocks 0, jitter 0, one rule, a webhook sink.`,
    "Credits: each simulator's own count over the measured blocks (operation 11, 3 credits a request), per hour of that run.",
    "Every second, expected: about half a second (the wait for the next firing, uniform over the second) plus the work; head: half the head interval on average plus the work, as the bare poller.",
    `Exit codes on SIGTERM: ${CONTENDERS.map((name, i) => `${name} ${codes[i]}`).join(", ")}.`,
    load,
  ],
  { write: !quick && BLOCKS === 300 },
);
