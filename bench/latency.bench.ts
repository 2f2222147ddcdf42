/**
 * Latency: a chain making a block a second, kaiawatch polling every second with lag 0 and
 * jitter 0: from a block's production to its webhook's arrival at a local receiver, p50
 * and p99 over 300 blocks. Target: p99 at most 1.5 s.
 *
 * kaiawatch is the real thing (`node dist/cli/bin.js run` in its own process); the
 * simulator and the receiver run here, so one clock times both ends. Every block holds one
 * Transfer of the watched token, which the rule matches. A block is "produced" when it is
 * appended to the simulator's chain (the API and the head serve it from then on).
 *
 * The real chain's blocks come at no fixed phase with the wall clock's seconds, on which the
 * schedule fires; so that the figures cover every phase, blocks are spaced 1 s + 1/N s apart
 * and their phase sweeps the whole second over the N blocks.
 *
 * `--quick` (or LATENCY_BLOCKS=N): fewer blocks, printed but not written to bench/results/.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createSimulator } from "../src/simulator/index.js";
import { report } from "./lib.js";
import { quick, sized } from "./mode.js";
import { buildDist, loadNote, median, percentile, round, tempDir } from "./support.js";

const BLOCKS = Number(process.env.LATENCY_BLOCKS ?? sized(300, 30, 3));
const WARMUP_BLOCKS = sized(5, 5, 1);
const TARGET_P99_MS = 1500;
const BIN = buildDist();

const sim = await createSimulator({ seed: 4, initialBlocks: 10, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
const producedAt = new Map<number, number>();
const arrivedAt = new Map<number, number>();
const receiver = createServer((req, res) => {
  const at = performance.now();
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const alert = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { block: number };
    if (!arrivedAt.has(alert.block)) arrivedAt.set(alert.block, at);
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const dir = tempDir("kaiawatch-bench-latency-");
const configPath = `${dir.path}/config.yaml`;
writeFileSync(
  configPath,
  `explorer:
  base_url: ${sim.url}
  requests_per_second: 10
chain:
  rpc_url: ${sim.rpcUrl}
  lag_blocks: 0
store: { path: ${dir.path}/store.json }
status: { listen: false }
log: { level: warn }
defaults: { schedule: "* * * * * *", start: latest, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: transfers, watch: token, when: { event: Transfer }, notify: [hook] }
sinks:
  hook: { type: webhook, url: "${receiverUrl}", allow_http: true }
`,
);

const child = spawn(process.execPath, [BIN, "run", "--config", configPath], { stdio: ["ignore", "inherit", "inherit"] });
const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
// Running once it has read the head (its first firing is at start).
while ((sim.stats().requests.rpc?.["200"] ?? 0) === 0) {
  if (child.exitCode !== null) throw new Error(`kaiawatch run exited (${child.exitCode})`);
  await new Promise((resolve) => setTimeout(resolve, 20));
}

const spacing = 1000 + 1000 / BLOCKS;
const total = WARMUP_BLOCKS + BLOCKS;
const first = performance.now() + 500;
const measured: number[] = [];
for (let i = 0; i < total; i++) {
  const due = first + i * spacing;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
  const block = sim.addBlock({ eventLogs: [{}] });
  producedAt.set(block, performance.now());
  if (i >= WARMUP_BLOCKS) measured.push(block);
}
// The last blocks' webhooks: a tick and a delivery away.
const deadline = performance.now() + 10_000;
while (measured.some((b) => !arrivedAt.has(b)) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
const load = loadNote("when the run ended");
child.kill("SIGTERM");
const code = await exited;
receiver.close();
await sim.close();
dir.remove();

const latencies = measured.filter((b) => arrivedAt.has(b)).map((b) => (arrivedAt.get(b) as number) - (producedAt.get(b) as number));
const missing = measured.length - latencies.length;
const p50 = median(latencies);
const p99 = percentile(latencies, 0.99);
report(
  quick || BLOCKS !== 300 ? "latency-quick" : "latency",
  [
    { name: "block produced to webhook received: p50", value: round(p50), unit: "ms" },
    { name: "block produced to webhook received: p99", value: round(p99), unit: "ms", target: `≤ ${TARGET_P99_MS}`, ok: p99 <= TARGET_P99_MS && missing === 0 },
    { name: "fastest", value: round(Math.min(...latencies)), unit: "ms" },
    { name: "slowest", value: round(Math.max(...latencies)), unit: "ms" },
    { name: "blocks measured", value: latencies.length, unit: "blocks", baseline: measured.length },
    { name: "webhooks missing after 10 s", value: missing, unit: "blocks", target: "0", ok: missing === 0 },
  ],
  [
    `${BLOCKS} blocks after ${WARMUP_BLOCKS} unmeasured ones, ${round(spacing, 2)} ms apart (their phase against the wall clock's seconds sweeps the whole second); each holds one Transfer of the watched token.`,
    "kaiawatch run (compiled dist/, its own process): schedule every second, lag_blocks 0, jitter 0, one rule, a webhook sink (plain http to a receiver on 127.0.0.1 answering 204).",
    "The expected figure is about half a second (the wait for the next firing, uniform over the second) plus the tick and the delivery; the worst case a whole second plus them.",
    `kaiawatch run exited with ${code} on SIGTERM.`,
    load,
  ],
  { write: !quick && BLOCKS === 300 },
);
