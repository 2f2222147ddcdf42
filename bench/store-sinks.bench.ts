/**
 * `npm run bench -- store-sinks` (also run by `npm run bench -- store`): what the store
 * spends on an alert delivered to several sinks, and what the delivery history adds to it. The store holds `alerts` alerts, each for
 * every one of `sinks` sinks (1 or 5), and makes the daemon's commits: a window with two new
 * NFT-transfer alerts (~1 KB of JSON each) for every sink, and the deliveries of the two
 * oldest pending alerts to every sink. Measured: the bytes on disk per alert per sink (the
 * database file after the commits and a clean close, which folds the WAL in) and the time
 * a commit takes.
 *
 * Each case is filled and measured in a child process of its own. Sizes: 10,000 and 100,000
 * alerts held, all pending.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import BetterSqlite3 from "better-sqlite3";
import { createTestCommon } from "../src/common/common.js";
import { openStore } from "../src/store/open-store.js";
import type { Cursor } from "../src/store/types.js";
import { childOrMain, runChild } from "./child-run.js";
import { report, type BenchFigure } from "./lib.js";
import { quick, sized } from "./mode.js";
import { nftTransferAlert, seedEntries, seedStore } from "./store-seed.js";
import { loadNote, median, percentile, round, tempDir } from "./support.js";

const COMMITS = sized(200, 100, 10);
const AT = "2026-11-20T00:00:00.000Z";
const SINKS = ["slack", "email", "webhook", "discord", "telegram"];

interface Measured {
  alerts: number;
  sinks: number;
  commit_p50_ms: number;
  commit_p99_ms: number;
  /** The database file after the commits and a close (no WAL left). */
  bytes: number;
  /** One alert document as JSON, for scale. */
  document_bytes: number;
  /** Whether each delivery carried its attempt (the delivery history), as the dispatcher's do. */
  history: boolean;
  /** Attempts recorded, and the pages their table and indexes take (all, and used), from SQLite's dbstat. */
  attempts: number;
  attempt_pages_bytes: number;
  attempt_used_bytes: number;
}

const cursor = (block: number): Cursor => ({ key: "src_bench", watch: "collection", source: "nft_transfers", description: "bench", block, updated_at: AT });

async function measure(path: string, alerts: number, sinkCount: number, history: boolean): Promise<Measured> {
  const sinks = SINKS.slice(0, sinkCount);
  const store = await openStore(createTestCommon(), { path });
  const times: number[] = [];
  let next = alerts;
  for (let i = 0; i < COMMITS; i++) {
    // The deliveries of the two oldest pending alerts, as a dispatcher per sink would have made them.
    const sent = (await store.listOutbox({ state: "pending", limit: 2 * sinkCount })).map((e) => ({ id: e.id, alert: e.alert.id }));
    const entries = [...seedEntries({ count: 2, from: next, state: "pending", at: AT, sinks })];
    next += 2;
    const t = performance.now();
    await Promise.all([store.commitWindow({ cursor: cursor(1000 + i), entries }), store.updateOutbox(sent.map(({ id, alert }) => ({ id, kind: "delivered" as const, at: AT, ...(history ? { history: { delivery_id: alert, attempt: 1, status: 200, latency_ms: 143 } } : {}) })))]);
    times.push(performance.now() - t);
  }
  const held = (await store.stats()).outbox;
  if (held !== next * sinkCount) throw new Error(`the store holds ${held} entries, expected ${next * sinkCount}`);
  await store.close();
  const db = new BetterSqlite3(path, { readonly: true });
  const pages = db.prepare("SELECT coalesce(sum(pgsize), 0) AS bytes, coalesce(sum(pgsize - unused), 0) AS used FROM dbstat WHERE name IN ('delivery_attempts', 'delivery_attempts_by_time', 'delivery_attempts_by_alert')").get() as { bytes: number; used: number };
  const attempts = (db.prepare("SELECT count(*) AS n FROM delivery_attempts").get() as { n: number }).n;
  db.close();
  return {
    history,
    attempts,
    attempt_pages_bytes: pages.bytes,
    attempt_used_bytes: pages.used,
    alerts: next,
    sinks: sinkCount,
    commit_p50_ms: median(times),
    commit_p99_ms: percentile(times, 0.99),
    bytes: statSync(path).size,
    document_bytes: Buffer.byteLength(JSON.stringify(nftTransferAlert(0, AT))),
  };
}

async function inChild(args: string[]): Promise<void> {
  const [what, dir, alertsText, sinksText, historyText] = args;
  const path = join(dir!, "store.db");
  const alerts = Number(alertsText);
  const sinks = Number(sinksText);
  if (what !== "case") throw new Error(`unknown child ${what}`);
  // Filled and measured in one process: nothing here measures memory, and a process fewer per case keeps the smoke run short.
  await seedStore(path, { delivered: 0, pending: alerts, at: AT, sinks: SINKS.slice(0, sinks) });
  process.stdout.write(`${JSON.stringify(await measure(path, alerts, sinks, historyText === "history"))}\n`);
}

async function main(): Promise<void> {
  const sizes = sized([10_000, 100_000], [10_000], [500]);
  const loadBefore = loadNote("before");
  const results: Measured[] = [];
  for (const alerts of sizes) {
    for (const sinks of [1, 5]) {
      // Without the history first, then with it: the same commits, each delivery also recording its attempt.
      for (const history of [false, true]) {
        const dir = tempDir("kaiawatch-bench-sinks-");
        try {
          const started = performance.now();
          const measured = runChild(import.meta.url, ["case", dir.path, String(alerts), String(sinks), history ? "history" : "none"]) as Measured;
          console.log(`${alerts.toLocaleString("en-US")} alerts × ${sinks} sinks${history ? ", history" : ""} (${round((performance.now() - started) / 1000, 1)} s): ${JSON.stringify(measured)}`);
          results.push(measured);
        } finally {
          dir.remove();
        }
      }
    }
  }
  const figures: BenchFigure[] = [];
  for (const r of results.filter((m) => !m.history)) {
    const label = `${r.alerts.toLocaleString("en-US")} alerts × ${r.sinks} sink${r.sinks === 1 ? "" : "s"}`;
    figures.push({ name: `${label}: bytes per alert per sink`, value: round(r.bytes / (r.alerts * r.sinks)), unit: "B", baseline: r.document_bytes });
    figures.push({ name: `${label}: bytes per alert`, value: round(r.bytes / r.alerts), unit: "B" });
    figures.push({ name: `${label}: commit p50`, value: round(r.commit_p50_ms, 2), unit: "ms" });
    figures.push({ name: `${label}: commit p99`, value: round(r.commit_p99_ms, 2), unit: "ms" });
  }
  for (const alerts of sizes) {
    const one = results.find((r) => r.alerts >= alerts && r.alerts < alerts * 2 && r.sinks === 1 && !r.history);
    const five = results.find((r) => r.alerts >= alerts && r.alerts < alerts * 2 && r.sinks === 5 && !r.history);
    if (one === undefined || five === undefined) continue;
    figures.push({ name: `${alerts.toLocaleString("en-US")} alerts: bytes per alert, 5 sinks / 1 sink`, value: round(five.bytes / five.alerts / (one.bytes / one.alerts), 2), unit: "ratio" });
    figures.push({ name: `${alerts.toLocaleString("en-US")} alerts: commit p50, 5 sinks / 1 sink`, value: round(five.commit_p50_ms / one.commit_p50_ms, 2), unit: "ratio", baseline: round(one.commit_p50_ms, 2) });
  }
  // The delivery history: what an attempt takes, and what recording it adds to a commit, against the same run's case without it.
  for (const r of results.filter((m) => m.history)) {
    const base = results.find((m) => !m.history && m.alerts === r.alerts && m.sinks === r.sinks);
    const label = `${r.alerts.toLocaleString("en-US")} alerts × ${r.sinks} sink${r.sinks === 1 ? "" : "s"}, history`;
    figures.push({ name: `${label}: attempts recorded`, value: r.attempts, unit: "rows" });
    figures.push({ name: `${label}: bytes per attempt (pages)`, value: round(r.attempt_pages_bytes / Math.max(1, r.attempts)), unit: "B" });
    figures.push({ name: `${label}: bytes per attempt (used)`, value: round(r.attempt_used_bytes / Math.max(1, r.attempts)), unit: "B" });
    figures.push({ name: `${label}: commit p50`, value: round(r.commit_p50_ms, 2), unit: "ms" });
    if (base === undefined) continue;
    figures.push({ name: `${label}: commit p50, with / without history`, value: round(r.commit_p50_ms / base.commit_p50_ms, 2), unit: "ratio", baseline: round(base.commit_p50_ms, 2) });
    figures.push({ name: `${label}: commit p99, with / without history`, value: round(r.commit_p99_ms / base.commit_p99_ms, 2), unit: "ratio", baseline: round(base.commit_p99_ms, 2) });
    figures.push({ name: `${label}: file bytes, with / without history`, value: round(r.bytes / base.bytes, 3), unit: "ratio", baseline: base.bytes });
  }
  const notes = [
    "History: each case runs again with every delivery carrying its attempt (status 200, a latency), as the dispatcher's outcomes do; the store writes one delivery_attempts row per entry in the same commit. Bytes per attempt are the pages of that table and its two indexes (SQLite's dbstat) over the rows: all of the pages, and their used part (pages not yet full count in the first only). The ratios compare with the case without history in the same run.",
    `A commit: commitWindow (cursor advance, 2 new NFT-transfer alerts of ~1 KB, one entry per sink each) and updateOutbox (the 2 oldest pending alerts delivered to every sink) in the same tick: one group commit, one fsync of the WAL. ${COMMITS} commits per case. The baseline of "bytes per alert per sink" is the alert document's size as JSON.`,
    "Bytes: the SQLite database file after the commits and a clean close (which copies the WAL in and removes it), divided by the alerts it holds (the seed and the commits' alerts), and by the sinks. Indexes included.",
    "Before each alert was stored once (commit 6e30a1d: the whole document in every outbox row; same machine, 27 November, load 16-21): bytes per alert per sink 2,167 (10,400 alerts × 1 sink), 2,169 (× 5), 2,168 (100,400 × 1), 2,172 (× 5); bytes per alert with 5 sinks 10,844 and 10,862 (5.0 × one sink's); commit p50 14.71 ms (1 sink) and 27.22 ms (5 sinks) at 10,400 alerts, 14.07 and 27.44 ms at 100,400; p99 87.8, 187.2, 154.7 and 83.7 ms. Commit times on this machine are mostly fsync waits behind the other processes' disk traffic: compare them within a run, and take the bytes as the firm figure.",
    loadBefore,
    loadNote("after"),
  ];
  report("store-sinks", figures, notes, { write: !quick });
}

await childOrMain(inChild, main);
