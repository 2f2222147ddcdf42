import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { startKaiawatch, waitFor } from "../helpers/child.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { nodeFamiliesToOut } from "../helpers/simulator-config.js";

/**
 * The log families and internal transactions (chain.traces) through the explorer, through the node and through both, each as real
 * processes: `kaiawatch run` is killed with SIGKILL in the middle of its work, twice, while the
 * chain grows between the runs, and `kaiawatch once` finishes at the last head. Each choice
 * delivers the same alerts under the same ids as a healthy explorer-only pass over the same
 * blocks: repeated only under the same id (at-least-once), none lost, none under a second id.
 */
const KILLS = 2;
const CHOICES = ["explorer", "node", "both"] as const;
let sim: Simulator;
const dir = tempDir("kaiawatch-node-logs-sigkill-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 31, initialBlocks: 60 });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

function configText(source: string, start: number, name: string): string {
  return `
explorer: { base_url: "${sim.url}", requests_per_second: 100000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, requests_per_second: 100000, traces: true }
store: { path: "${join(dir.path, `${name}.db`)}" }
status: { listen: false }
defaults: { schedule: "* * * * * *", start: ${start}, jitter: 0s, source: ${source} }
${nodeFamiliesToOut(sim)}
sinks:
  out: { type: file, path: "${join(dir.path, `${name}.jsonl`)}" }
`;
}

describe("event logs, NFT transfers and internal transactions through SIGKILLs", () => {
  it("give the same alerts under the same ids through the explorer, the node and both", async () => {
    const start = sim.head() - 50;
    const runs = CHOICES.map((choice) => {
      const configPath = join(dir.path, `${choice}.yaml`);
      writeFileSync(configPath, configText(choice, start, choice));
      return { choice, configPath, out: join(dir.path, `${choice}.jsonl`) };
    });
    for (let kill = 0; kill < KILLS; kill++) {
      for (const run of runs) {
        const before = readJsonLines(run.out).length;
        const child = startKaiawatch(["run", "--config", run.configPath, "--log-level", "warn", "--log-format", "json"]);
        // Killed once this run has delivered something: in the middle of its work, not before it.
        await waitFor(() => readJsonLines(run.out).length > before || child.process.exitCode !== null, 30_000, `${run.choice} run ${kill} to deliver`);
        child.process.kill("SIGKILL");
        const { signal } = await child.exited;
        expect(signal, child.stderr()).toBe("SIGKILL");
      }
      // New blocks for the next runs, each choice's run having work of its own to be killed in.
      sim.mine(20);
    }
    for (const run of runs) {
      const finish = startKaiawatch(["once", "--config", run.configPath, "--drain-timeout", "5m", "--log-level", "warn", "--log-format", "json"]);
      const { code } = await finish.exited;
      expect(code, finish.stderr()).toBe(0);
    }

    // A healthy explorer-only pass over the same blocks, in this process.
    // What it queued, not what it delivered: a delivery cut short by a busy machine must not shorten the reference.
    const reference = await createDaemon(quietCommon(), { config: configFromText(configText("explorer", start, "reference")) });
    let expected: string[];
    try {
      await reference.engine.runOnce();
      expected = (await reference.store.listOutbox()).map((e) => `${e.rule} ${e.alert.id}`).sort();
    } finally {
      await reference.stop();
    }
    const ids = (name: string) => new Set(readJsonLines<AlertDocument>(join(dir.path, `${name}.jsonl`)).map((a) => `${a.rule} ${a.id}`));
    for (const rule of ["token-transfers", "collection-moves", "multi-moves", "holder-moves", "wallet-token-transfers", "failed-calls", "wallet-internal"]) expect(expected.some((id) => id.startsWith(`${rule} `)), rule).toBe(true);
    // Each choice: every reference alert, and no id the reference does not have (a record under a second id would be one).
    for (const run of runs) expect([...ids(run.choice)].sort(), run.choice).toEqual(expected);
    console.log(`node logs sigkill: ${KILLS} kills per choice, ${expected.length} alerts; deliveries ${runs.map((r) => `${r.choice} ${readJsonLines(r.out).length}`).join(", ")}`);
  }, 180_000);
});
