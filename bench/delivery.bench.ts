/**
 * Delivery throughput of one sink with concurrency 1: a backlog of alerts in a real store
 * (fsynced JSON file) drained by the real dispatcher. The file sink appends and fsyncs each
 * alert; the 1 ms sink stands for a fast HTTP receiver; the null sink measures the
 * dispatcher and the store alone.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestCommon } from "../src/common/common.js";
import { createDispatcher } from "../src/notify/dispatcher.js";
import type { Sink } from "../src/notify/sink.js";
import { createFileSink } from "../src/notify/sinks/file.js";
import { ALERT_DOCUMENT_VERSION } from "../src/model/alert-document.js";
import { openStore } from "../src/store/open-store.js";
import type { OutboxEntry } from "../src/model/outbox-entry.js";
import { report, type BenchFigure } from "./lib.js";
import { quick, sized } from "./mode.js";

const ALERTS = sized(2000, 500, 40);

async function alertsPerSecond(makeSink: (dir: string) => Sink, concurrency: number): Promise<{ rate: number; writes: number }> {
  const dir = await mkdtemp(join(tmpdir(), "kaiawatch-bench-delivery-"));
  try {
    const common = createTestCommon();
    const store = await openStore(common, { path: join(dir, "store.json") });
    const now = new Date().toISOString();
    const entries: OutboxEntry[] = Array.from({ length: ALERTS }, (_, i) => ({
      id: `alert-${i}:out`,
      sink: "out",
      rule: "r",
      state: "pending",
      attempts: 0,
      created_at: now,
      next_attempt_at: now,
      alert: { version: ALERT_DOCUMENT_VERSION, id: `alert-${i}`, rule: "r", watch: "w", source: "nft_transfers", network: "kairos", block: i, transaction_hash: null, datetime: null, summary: `alert ${i}`, links: {}, record: { i, note: "x".repeat(400) }, created_at: now },
    }));
    await store.commitWindow({ cursor: { key: "k", watch: "w", source: "nft_transfers", description: "bench", block: 1, updated_at: now }, entries });
    const dispatcher = createDispatcher(common, { store, sinks: [{ sink: makeSink(dir), concurrency, maxAttempts: 5, maxAgeMs: 3600_000 }], rules: [] });
    const writesBefore = (await store.stats()).writes;
    const started = performance.now();
    const result = await dispatcher.drain({ timeoutMs: 600_000 });
    const seconds = (performance.now() - started) / 1000;
    if (result.delivered !== ALERTS) throw new Error(`delivered ${result.delivered} of ${ALERTS}`);
    const writes = (await store.stats()).writes - writesBefore;
    await store.close();
    return { rate: ALERTS / seconds, writes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const fileSink = (dir: string) => createFileSink(createTestCommon(), "out", { path: join(dir, "alerts.jsonl") });
const fastReceiver: Sink = { name: "out", type: "bench", send: () => new Promise((resolve) => setTimeout(resolve, 1)) };
const nullSink: Sink = { name: "out", type: "bench", send: async () => undefined };

const file1 = await alertsPerSecond(fileSink, 1);
const file4 = await alertsPerSecond(fileSink, 4);
const fast1 = await alertsPerSecond(() => fastReceiver, 1);
const null1 = await alertsPerSecond(() => nullSink, 1);

const figures: BenchFigure[] = [
  { name: "file sink, concurrency 1", value: Math.round(file1.rate), unit: "alerts/s" },
  { name: "file sink, concurrency 4", value: Math.round(file4.rate), unit: "alerts/s" },
  { name: "1 ms receiver, concurrency 1", value: Math.round(fast1.rate), unit: "alerts/s" },
  { name: "null sink, concurrency 1 (dispatcher + store)", value: Math.round(null1.rate), unit: "alerts/s" },
  { name: "store writes for the file sink, concurrency 1", value: file1.writes, unit: `writes for ${ALERTS} alerts` },
];
report("delivery", figures, [
  `${ALERTS} alerts waiting in a fresh store (about 1.7 MB), drained by the dispatcher.`,
  "Before outcomes were recorded without awaiting their fsync (one fsynced store write per alert, and a pass over the whole backlog per send), an interleaved A/B run on this machine under load gave: file sink c=1 121 → 466 alerts/s, 1 ms receiver c=1 112 → 766 alerts/s, and one store write per alert (2,000).",
  "The machine is shared (load average 4-7 on 2 cores during these runs): compare figures from the same run only.",
  "What remains for the file sink is the disk: its own fsync per alert, and the store rewriting its whole file at each group commit. Keeping the file open with fdatasync measured only ~5% faster at 2,000 alerts, so the sink still opens the file per delivery (log rotation keeps working).",
], { write: !quick });
