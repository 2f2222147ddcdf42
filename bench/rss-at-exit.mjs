/**
 * Preloaded into a `kaiawatch` process by a benchmark (`node --import ./bench/rss-at-exit.mjs
 * dist/cli/bin.js …`): at exit, one JSON line on stderr with the resident memory then and at
 * its highest, and its live heap (after a collection, when the process runs with
 * --expose-gc), so the figure is the daemon's own, as users run it, without the benchmark's
 * process around it. Resident memory keeps the high-water mark of the config's parse; the
 * live heap is what the daemon's objects hold. The main thread's only: a thread that parses
 * the config exits before it, and would print figures of its own.
 */
import { isMainThread } from "node:worker_threads";

if (isMainThread) process.on("exit", () => {
  const mb = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
  globalThis.gc?.();
  process.stderr.write(`${JSON.stringify({ rssMB: mb(process.memoryUsage().rss), maxRssMB: mb(process.resourceUsage().maxRSS * 1024), heapMB: mb(process.memoryUsage().heapUsed) })}\n`);
});
