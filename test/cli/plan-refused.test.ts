import { existsSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { startKaiawatch, waitFor } from "../helpers/child.js";
import { readJsonLines, recordKeyOf, tempDir } from "../helpers/harness.js";
import { daemonFiles, simulatorHead } from "../helpers/simulator-config.js";
import { readOnDisk } from "../store/fixtures/on-disk.js";

/**
 * A FREE key in a config that says PRO_PLUS: operation 7 answers 403. The daemon logs an
 * error naming the plan and plans again as on FREE (the wallet's internal transactions
 * through operation 8), from the watch's position: every internal transaction of the wallet
 * after the start is alerted, none twice.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-plan-refused-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 41, initialBlocks: 20, blockTime: 100, apiKey: "a-free-key", plan: "FREE", density: { eventLogs: 1, nftTransfers: 1, internalTransactions: 6 } });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

describe("an operation the key's plan refuses", () => {
  it("is named with the plan it needs, and the watches are planned again without it: nothing lost, nothing repeated", async () => {
    const { storePath, alertsPath, configPath } = daemonFiles(dir.path);
    const wallet = sim.addresses.busyWallet;
    // Thirty blocks back, and a tick every 30 s: operation 7 (20 credits a window) is then
    // cheaper than operation 8 (a credit a block), so a PRO_PLUS plan chooses it.
    const start = sim.head() - 30;
    writeFileSync(
      configPath,
      `
${simulatorHead(sim, { storePath, requestsPerSecond: 200, explorer: 'api_key: "${KAIASCAN_API_KEY}", api_plan: PRO_PLUS' })}
defaults: { schedule: "*/30 * * * * *", start: ${start}, jitter: 0s }
sinks: { out: { type: file, path: "${alertsPath}" } }
watches: [ { name: hot-wallet, account: "${wallet}", sources: [internal_transactions] } ]
rules: [ { name: every-call, watch: hot-wallet, source: internal_transactions, notify: [out] } ]
`,
    );
    const child = startKaiawatch(["run", "--config", configPath, "--log-format", "json"], { KAIASCAN_API_KEY: "a-free-key" });
    const cursors = () => (existsSync(storePath) ? Object.values(readOnDisk(storePath).cursors).map((c) => c.block) : []);
    const alerted = () => readJsonLines(alertsPath);
    const truthTo = (end: number) => sim.truth.accountInternalTransactions(wallet, { from: start + 1, to: end }).map((t) => NORMALIZERS.internal_transactions(t).key);
    let end = 0;
    try {
      await waitFor(() => child.stderr().includes("planned again without the refused operation"), 20_000, "the new plan");
      await waitFor(() => (end = Math.max(...cursors(), 0)) > start + 25, 20_000, "the new plan's source to pass 25 blocks");
      // The alerts of every block up to there are committed; the file sink delivers them.
      await waitFor(() => truthTo(end).every((key) => alerted().some((a) => recordKeyOf(a) === key)), 20_000, "every alert up to the cursor");
    } finally {
      child.process.kill("SIGTERM");
    }
    expect((await child.exited).code).toBe(0);
    const refusal = child
      .stderr()
      .split("\n")
      .filter((line) => line.includes("KW_EXPLORER_PLAN"))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(refusal.some((line) => line.msg.includes("needs PRO_PLUS") && line.msg.includes("set explorer.api_plan: FREE"))).toBe(true);

    const keys = alerted().filter((a) => a.block <= end).map(recordKeyOf);
    const truth = truthTo(end);
    expect(truth.length).toBeGreaterThan(10);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(keys)).toEqual(new Set(truth));
  });
});
