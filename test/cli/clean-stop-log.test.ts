import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { tempDir } from "../helpers/harness.js";
import { simulatorHead, writeConfig } from "../helpers/simulator-config.js";
import { logLines, startKaiawatch, waitFor, waitForLog } from "../helpers/child.js";

/**
 * Issue 30: every SIGHUP and SIGTERM logged `ERROR: tick failed … "stopping"`, which trips
 * log-based alerting. A tick ended by a stop or a reload is info; no error-level line.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-clean-stop-");
beforeAll(async () => {
  // Slow answers and two-block windows: a catch-up is running when the signals come.
  sim = await createSimulator({ seed: 45, initialBlocks: 300, faults: { latencyMs: 30 } });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

describe("a clean stop is not an error", () => {
  it("logs no error-level line for a SIGHUP and a SIGTERM in the middle of ticks", async () => {
    const configPath = writeConfig(
      dir.path,
      `
${simulatorHead(sim, { storePath: join(dir.path, "kaiawatch.db") })}
defaults: { schedule: "* * * * * *", start: "-290", jitter: 0s }
watches: [ { name: token, contract: "${sim.addresses.busyToken}", max_window_blocks: 2 } ]
rules: [ { name: token-logs, watch: token, notify: [out] } ]
sinks: { out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" } }
`,
    );
    const child = startKaiawatch(["run", "--config", configPath, "--log-format", "json"]);
    const lines = () => logLines(child);
    try {
      await waitForLog(child, (l) => l.msg === "catching up", 20_000, "the catch-up");
      child.process.kill("SIGHUP");
      await waitForLog(child, (l) => l.msg === "config reloaded", 20_000, "the reload");
      await waitFor(() => lines().filter((l) => l.msg === "catching up").length >= 2, 20_000, "the catch-up after the reload");
      child.process.kill("SIGTERM");
      expect((await child.exited).code).toBe(0);
    } finally {
      if (child.process.exitCode === null) child.process.kill("SIGKILL");
    }
    const all = lines();
    // Both stops ended a tick in the middle of its catch-up: said at info.
    expect(all.filter((l) => l.msg === "tick ended by the stop; the cursor stays after the last committed window").map((l) => l.level)).toEqual([30, 30]);
    expect(all.filter((l) => l.level >= 50)).toEqual([]);
  }, 60_000);
});
