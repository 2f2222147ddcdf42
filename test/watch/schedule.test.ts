import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { createSimulator } from "../../src/simulator/index.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { configFromText, quietCommon, recordKeyOf, repeated, tempDir } from "../helpers/harness.js";
import { observeFor } from "../helpers/wait-for.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("scheduling", () => {
  it("a tick still running skips the next one and counts it; ticks of a source never overlap", async () => {
    // Every answer takes 1.5 s while the schedule fires every second.
    const sim = await createSimulator({ seed: 51, initialBlocks: 40, blockTime: 200, faults: { latencyMs: 1500 } });
    const dir = tempDir();
    cleanups.push(() => sim.close(), () => dir.remove());
    const start = sim.head() - 30;
    const common = quietCommon();
    const config = configFromText(`
explorer: { base_url: "${sim.url}", requests_per_second: 100, page_size: 2000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: false }
defaults: { schedule: "* * * * * *", start: ${start}, jitter: 0s, max_window_blocks: 2 }
watches: [ { name: token, contract: "${sim.addresses.busyToken}" } ]
rules: [ { name: token-logs, watch: token, notify: [out] } ]
sinks: { out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" } }
`);
    const daemon = await createDaemon(common, { config });
    let maxConcurrent = 0;
    await daemon.start();
    const interval = setInterval(() => {
      maxConcurrent = Math.max(maxConcurrent, daemon.engine.states().filter((s) => s.running).length);
    }, 20);
    await observeFor(5_000);
    clearInterval(interval);
    await daemon.stop();

    const [state] = daemon.engine.states();
    expect(state!.skipped).toBeGreaterThan(0);
    expect(maxConcurrent).toBe(1);
    const metrics = await common.metrics.registry.getSingleMetricAsString("kaiawatch_source_ticks_skipped_total");
    expect(metrics).toMatch(new RegExp(`kaiawatch_source_ticks_skipped_total\\{watch="token",source="${state!.key}"\\} ${state!.skipped}`));

    // Skipping loses nothing: what was committed up to the cursor is every record, once.
    const reopened = await createDaemon(quietCommon(), { config });
    cleanups.push(() => reopened.stop());
    const cursor = (await reopened.store.getCursor(state!.key))!.block;
    expect(cursor).toBeGreaterThan(start);
    const keys = (await reopened.store.listOutbox()).map((e) => recordKeyOf(e.alert));
    const truth = sim.truth.accountEventLogs(sim.addresses.busyToken, { from: start, to: cursor }).map((r) => NORMALIZERS.event_logs(r).key);
    expect(repeated(keys)).toEqual([]);
    expect(new Set(keys)).toEqual(new Set(truth));
  }, 30_000);
});
