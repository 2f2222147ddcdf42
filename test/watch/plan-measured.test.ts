import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { planCredits } from "../../src/watch/credit-plan.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { quietCommon, tempDir } from "../helpers/harness.js";
import { simulatorHead, writeConfig } from "../helpers/simulator-config.js";

/**
 * `kaiawatch plan` against a measured run: the daemon polls the simulator, and the
 * simulator's own credit counter is compared with the plan's credits per tick. The plan
 * assumes Kaia's one block a second, so each tick of the 2 s schedule must find exactly two
 * new blocks: the test mines two and then ticks every source once (as a firing does), instead
 * of a block timer beside the daemon's own clock, which a loaded machine pulls apart (a firing
 * that finds no new block spends nothing, one that finds four spends less than two would).
 * Every window fits one page, the plan's other assumption.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-plan-measured-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 5, initialBlocks: 20, blockTime: 0 });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

describe("kaiawatch plan against the simulator's credit counter", () => {
  it("predicts the credits per tick of a measured run within 5%", async () => {
    const configPath = writeConfig(
      dir.path,
      `
${simulatorHead(sim, { storePath: join(dir.path, "store.db"), requestsPerSecond: 200 })}
defaults: { schedule: "*/2 * * * * *", jitter: 0s }
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [nft_transfers, internal_transactions], via: own }
  - { name: token, contract: "${sim.addresses.busyToken}" }
  - { name: collection, collection: "${sim.addresses.busyCollection}" }
  - { name: blocks, every_block: true }
rules:
  - { name: wallet-nfts, watch: wallet, source: nft_transfers, notify: [out] }
  - { name: wallet-calls, watch: wallet, source: internal_transactions, notify: [out] }
  - { name: token-logs, watch: token, notify: [out] }
  - { name: collection-transfers, watch: collection, notify: [out] }
  - { name: failed-calls, watch: blocks, when: { status: Fail }, notify: [out] }
sinks:
  out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" }
`,
    );
    const { config } = await loadConfig({ path: configPath, env: {}, checks: CONFIG_CHECKS });
    const plan = planCredits(config, { dayMs: Date.now() });
    const predictedPerTick = plan.sources.reduce((sum, s) => sum + s.creditsPerTick, 0);
    // Operations 3, 7, 11, 4 once a tick, and operation 8 once for each of the tick's 2 blocks.
    expect(predictedPerTick).toBe(3 + 20 + 3 + 5 + 2);

    const daemon = await createDaemon(quietCommon(), { config });
    try {
      // The first tick only sets the cursors (start: latest) and costs nothing: measure from after it.
      await daemon.engine.runOnce();
      const creditsA = sim.stats().creditsTotal;
      const TICKS = 5;
      for (let tick = 0; tick < TICKS; tick++) {
        sim.mine(2);
        const { results } = await daemon.engine.runOnce();
        expect(results.map((r) => r.error)).toEqual(results.map(() => undefined));
      }
      const measuredPerTick = (sim.stats().creditsTotal - creditsA) / TICKS;
      const error = Math.abs(measuredPerTick - predictedPerTick) / predictedPerTick;
      expect(error, `measured ${measuredPerTick} credits a tick over ${TICKS} ticks, predicted ${predictedPerTick}`).toBeLessThan(0.05);
      // And per day, as `kaiawatch plan` prints it: 43,200 ticks of 2 s.
      expect(plan.creditsPerDay).toBe(43_200 * predictedPerTick);
    } finally {
      await daemon.stop();
    }
  }, 60_000);
});
