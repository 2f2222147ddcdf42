import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { createTestCommon } from "../../src/common/common.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { freePort } from "../helpers/free-port.js";
import { configFromText, logCapture, tempDir } from "../helpers/harness.js";
import { simulatorHead, writeConfig } from "../helpers/simulator-config.js";
import { runCli } from "../helpers/run-cli.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * Issue 30: `cursors --set hot-wallet=latest` on a daemon in the middle of a long catch-up
 * waited 60 s for the tick to end and failed ("stayed in one tick for 60 s"). The move now
 * interrupts the tick, keeps its committed windows, and takes effect at the next tick.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-cursor-live-");
const configPath = join(dir.path, "config.yaml");
let start: number;

beforeAll(async () => {
  sim = await createSimulator({ seed: 44, initialBlocks: 400, faults: { latencyMs: 40 } });
  start = sim.head() - 390;
  const port = await freePort();
  writeConfig(
    dir.path,
    `
${simulatorHead(sim, { storePath: join(dir.path, "kaiawatch.db"), listen: `127.0.0.1:${port}` })}
defaults: { schedule: "* * * * * *", start: ${start}, jitter: 0s }
watches:
  # Two blocks a window at 40 ms a request: the catch-up takes about eight seconds.
  - { name: token, contract: "${sim.addresses.busyToken}", max_window_blocks: 2 }
rules:
  - { name: token-logs, watch: token, notify: [out] }
sinks: { out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" } }
`,
  );
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

describe("a cursor move on a running daemon in the middle of a catch-up", () => {
  it("interrupts the catch-up and applies the move within one tick", async () => {
    const log = logCapture();
    const common = createTestCommon({ logger: pino({ level: "info" }, log.destination) });
    const daemon = await createDaemon(common, { config: configFromText(readFileSync(configPath, "utf8")) });
    try {
      await daemon.start();
      const key = daemon.plan.sources[0]!.key;
      // The catch-up has committed a few windows and is still running.
      await waitFor(async () => ((await daemon.store.getCursor(key))?.block ?? start) > start + 4, 10_000, "the daemon's cursor past the moved block");
      expect(daemon.engine.states()[0]!.running).toBe(true);

      const began = performance.now();
      const moved = await runCli("cursors", "--config", configPath, "--set", "token=latest", "--yes");
      const took = performance.now() - began;
      expect(moved.err).toBe("");
      expect(moved.code).toBe(0);
      const head = sim.head();
      expect(moved.out).toMatch(new RegExp(`^Moving ${key} \\(token\\) from \\d+ to ${head}: skips \\d+ blocks`, "m"));
      expect(moved.out).toMatch(new RegExp(`^${key} \\(token\\): (\\d+) → ${head} \\(moved by the running daemon`, "m"));
      expect(moved.out).toMatch(new RegExp(`^To undo: kaiawatch cursors --set ${key}=\\d+ --yes$`, "m"));
      // Not 60 s: the tick ended at its next request (the command also reads the head and the store).
      expect(took).toBeLessThan(5_000);
      // The move stands: the interrupted tick did not commit over it, and the next one starts from it.
      expect((await daemon.store.getCursor(key))?.block).toBe(head);
      const ticks = daemon.engine.states()[0]!.ticks;
      await waitFor(() => daemon.engine.states()[0]!.ticks > ticks, 5_000, "the daemon's next tick");
      expect((await daemon.store.getCursor(key))?.block).toBe(head);
      expect(daemon.engine.states()[0]!.last_outcome).toBe("ok");

      const interrupted = log.lines.find((l) => l.msg === "tick interrupted; the next tick starts from the cursor");
      expect(interrupted).toMatchObject({ level: 30, source: key, reason: expect.stringContaining(`cursor moved to ${head} through the status API`) });
      expect(log.lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    } finally {
      await daemon.stop();
    }
  }, 30_000);
});
