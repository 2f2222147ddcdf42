import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";

/** The daemon in process, over the simulator: a balance rule without notify: is sent where the routes tree sends its labels. */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PAYER = "0x00000000000000000000000000000000000fee00";

describe("a routed balance rule, end to end in process", () => {
  it("fires to the sink its labels route to, with its labels in the document, and not to the root's", async () => {
    const sim = await createSimulator({ seed: 12, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
    cleanups.push(() => sim.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const text = `
explorer: { base_url: ${sim.url}, requests_per_second: 100000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.db")} }
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", jitter: 0s }
watches:
  - { name: payer, balance: ["${PAYER}"] }
rules:
  - { name: payer-low, watch: payer, severity: warning, labels: { team: treasury }, when: { balance: { lt: "100 KAIA" } } }
sinks:
  treasury: { type: file, path: ${join(dir.path, "treasury.jsonl")} }
  fallback: { type: file, path: ${join(dir.path, "fallback.jsonl")} }
routes:
  receiver: fallback
  routes:
    - { matchers: [team=treasury, 'severity=~"warning|critical"'], receiver: treasury, group_by: [rule] }
`;
    const config = configFromText(text);
    expect(config.rules[0]).toMatchObject({ notify: ["treasury"], routed: true });
    const daemon = await createDaemon(quietCommon(), { config });
    cleanups.push(() => daemon.stop());
    await daemon.runOnce();
    const sent = readJsonLines(join(dir.path, "treasury.jsonl"));
    expect(sent.map((a) => [a.rule, a.status, a.labels])).toEqual([["payer-low", "firing", { rule: "payer-low", severity: "warning", source: "balances", team: "treasury", watch: "payer" }]]);
    expect(readJsonLines(join(dir.path, "fallback.jsonl"))).toEqual([]);
  });
});
