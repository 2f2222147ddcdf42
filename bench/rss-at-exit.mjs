/**
 * Preloaded into a `kaiawatch` process by a benchmark (`node --import ./bench/rss-at-exit.mjs
 * dist/cli/bin.js …`): at exit, one JSON line on stderr with the resident memory then and at
 * its highest, so the figure is the daemon's own, as users run it, without the benchmark's
 * process around it.
 */
process.on("exit", () => {
  const mb = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
  process.stderr.write(`${JSON.stringify({ rssMB: mb(process.memoryUsage().rss), maxRssMB: mb(process.resourceUsage().maxRSS * 1024) })}\n`);
});
