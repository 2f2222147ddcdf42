import { describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { pino } from "pino";
import { createProgress } from "../../src/common/progress.js";
import { createTestCommon } from "../../src/common/common.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { configFromText, logCapture, tempDir } from "../helpers/harness.js";

/** Issue 30: long work (a catch-up, a replay) shows its progress; here on a non-terminal, with the clock injected. */
describe("progress of long work", () => {
  it("logs blocks done of the total, the rate and the time left at info every five seconds, not at every step", () => {
    let now = 1_000_000;
    const log = logCapture();
    const progress = createProgress({ now: () => now, logger: pino({ level: "info" }, log.destination) });
    const task = progress.start({ label: "catching up", total: 1000, fields: { watch: "hot", source: "src_1" } });
    for (let step = 0; step < 20; step++) {
      now += 1000;
      task.advance(40);
    }
    task.end();
    // 20 s at 40 blocks a second: a line at 5, 10, 15 and 20 s.
    expect(log.lines.map((l) => l.msg)).toEqual([
      "catching up: 200 of 1000 blocks (20%), 40.0 blocks/s, 20s left",
      "catching up: 400 of 1000 blocks (40%), 40.0 blocks/s, 15s left",
      "catching up: 600 of 1000 blocks (60%), 40.0 blocks/s, 10s left",
      "catching up: 800 of 1000 blocks (80%), 40.0 blocks/s, 5s left",
    ]);
    expect(log.lines[0]).toMatchObject({ level: 30, watch: "hot", source: "src_1", blocks_done: 200, blocks_total: 1000, blocks_per_second: 40, seconds_left: 20 });
  });

  it("draws one line on a terminal for every task together, and clears it at the end", () => {
    let now = 0;
    let written = "";
    const terminal = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        written += chunk.toString();
        callback();
      },
    });
    const log = logCapture();
    const progress = createProgress({ now: () => now, logger: pino({ level: "info" }, log.destination), terminal });
    const a = progress.start({ label: "catching up", total: 100 });
    const b = progress.start({ label: "catching up", total: 300 });
    now += 2000;
    a.advance(100);
    b.advance(100);
    a.end();
    b.end();
    const frames = written.split("\r\x1b[K");
    expect(frames).toContain("catching up (2): 100 of 400 blocks (25%), 50.0 blocks/s, 6s left");
    expect(frames.at(-1)).toBe("");
    expect(log.lines).toEqual([]);
  });

  it("a daemon's catch-up logs its progress (once, not on a terminal)", async () => {
    const sim = await createSimulator({ seed: 47, initialBlocks: 120 });
    const dir = tempDir();
    try {
      const config = configFromText(`
explorer: { base_url: "${sim.url}", requests_per_second: 1000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${dir.path}/kaiawatch.db" }
status: { listen: false }
defaults: { start: "-100", jitter: 0s }
watches: [{ name: token, contract: "${sim.addresses.busyToken}", max_window_blocks: 10 }]
rules: [{ name: logs, watch: token, notify: [out] }]
sinks: { out: { type: file, path: "${dir.path}/alerts.jsonl" } }
`);
      // Each reading of the clock is a second later: the daemon's clock, injected.
      let now = Date.UTC(2026, 0, 1);
      const log = logCapture();
      const common = createTestCommon({ logger: pino({ level: "info" }, log.destination), now: () => (now += 1000) });
      const daemon = await createDaemon(common, { config });
      try {
        await daemon.runOnce({ drainTimeoutMs: 0 });
      } finally {
        await daemon.stop();
      }
      const lines = log.lines.filter((l) => typeof l.msg === "string" && l.msg.startsWith("catching up: "));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toMatchObject({ level: 30, watch: "token", source: daemon.plan.sources[0]!.key, blocks_total: 100 });
      const done = lines.map((l) => l.blocks_done as number);
      expect(done).toEqual([...done].sort((x, y) => x - y));
      expect(lines.at(-1)!.msg).toMatch(/^catching up: \d+ of 100 blocks \(\d+%\), [\d.]+ blocks\/s, (\d+[hms])+ left$/);
    } finally {
      await sim.close();
      dir.remove();
    }
  });
});
