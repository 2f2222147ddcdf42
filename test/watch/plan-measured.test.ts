import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { planCredits } from "../../src/watch/credit-plan.js";
import { startKaiawatch, waitForStatusUrl } from "../helpers/child.js";
import { tempDir } from "../helpers/harness.js";
import { simulatorHead, writeConfig } from "../helpers/simulator-config.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * `kaiawatch plan` against a measured run: the real daemon (a child process) polls the
 * simulator every 2 s, and the simulator's own credit counter is compared with the plan's
 * credits per tick. The plan assumes Kaia's one block a second, so each firing must find
 * exactly two new blocks: the test mines them right after each tick instead of trusting a
 * block timer, which a loaded machine delays (a firing that finds no new block spends
 * nothing and would skew the figure). Every window fits one page, the plan's other assumption.
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

interface StatusBody {
  sources: Array<{ key: string; running: boolean; ticks: number; last_outcome: string | null }>;
}

describe("kaiawatch plan against the simulator's credit counter", () => {
  it("predicts the credits per tick of a measured run within 5%", async () => {
    const configPath = writeConfig(
      dir.path,
      `
${simulatorHead(sim, { storePath: join(dir.path, "store.json"), listen: "127.0.0.1:0", requestsPerSecond: 200 })}
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

    const child = startKaiawatch(["run", "--config", configPath, "--log-format", "json"]);
    try {
      const url = await waitForStatusUrl(child);
      /** Waits until every source has finished a tick more than `after`, and none is running: the quiet second between ticks. */
      const settledAfter = async (after: number): Promise<number> => {
        let body: StatusBody | undefined;
        let settled = 0;
        const isSettled = async (): Promise<boolean> => {
          body = (await (await fetch(`${url}/status`)).json()) as StatusBody;
          const ticks = body.sources.map((s) => s.ticks);
          settled = ticks[0] ?? 0;
          return body.sources.length === 5 && body.sources.every((s) => !s.running && s.last_outcome === "ok") && new Set(ticks).size === 1 && settled > after;
        };
        await waitFor(isSettled, 20_000, `a settled tick after tick ${after}`).catch((error: unknown) => {
          throw new Error(`${(error as Error).message}: ${JSON.stringify(body)}`);
        });
        return settled;
      };
      // The first tick only sets the cursors (start: latest) and costs nothing: measure from after it.
      const ticksA = await settledAfter(0);
      const creditsA = sim.stats().creditsTotal;
      sim.mine(2);
      let ticksB = ticksA;
      for (let firing = 0; firing < 5; firing++) {
        ticksB = await settledAfter(ticksB);
        sim.mine(2);
      }
      const creditsB = sim.stats().creditsTotal;

      const measuredPerTick = (creditsB - creditsA) / (ticksB - ticksA);
      const error = Math.abs(measuredPerTick - predictedPerTick) / predictedPerTick;
      expect(error, `measured ${measuredPerTick} credits a tick over ${ticksB - ticksA} ticks, predicted ${predictedPerTick}`).toBeLessThan(0.05);
      // And per day, as `kaiawatch plan` prints it: 43,200 ticks of 2 s.
      expect(plan.creditsPerDay).toBe(43_200 * predictedPerTick);
    } finally {
      child.process.kill("SIGTERM");
    }
    expect((await child.exited).code).toBe(0);
  }, 60_000);
});
