/**
 * `kaiawatch once` for a config over the loader's limit (MAX_CONFIG_BYTES), which `once`
 * itself refuses: run by node-scale as `node --optimize-for-size --expose-gc --import
 * ./rss-at-exit.mjs bench/daemon-own-process.mjs DIST CONFIG`, so that the memory of a watch
 * per address at 100,000 is the daemon's own in a process of its own, as shipped, and not the
 * benchmark's process (under tsx, with every size before it). As `run` loads a large file,
 * the text is parsed in a child process of its own by the daemon's own code
 * (src/config/parse-in-child.ts, here with the size limit lifted and a larger heap for the
 * child) and compiled in this one; the daemon from dist/ then runs one pass and stops, and
 * rss-at-exit.mjs reports its memory.
 */
import { readFileSync } from "node:fs";

const [dist, path] = process.argv.slice(2);
const { parseConfigInChild } = await import(`${dist}/config/parse-in-child.js`);
// The YAML library's document of a 23 MB file outgrows the default heap.
const { config } = await parseConfigInChild({ text: readFileSync(path, "utf8"), fileName: "config.yaml", env: {}, maxBytes: Infinity }, ["--max-old-space-size=16384"]);
const { createTestCommon } = await import(`${dist}/common/common.js`);
const { createDaemon } = await import(`${dist}/daemon/create-daemon.js`);
const daemon = await createDaemon(createTestCommon(), { config });
// Held until exit, as `once` holds its daemon: rss-at-exit.mjs's live heap is then the daemon's objects.
globalThis.daemonAtExit = daemon;
try {
  const { results } = await daemon.engine.runOnce();
  const failed = results.filter((r) => r.error !== undefined);
  if (failed.length > 0) throw new Error(`${failed.length} sources failed, e.g. ${failed[0].key}: ${failed[0].error}`);
} finally {
  await daemon.stop();
}
