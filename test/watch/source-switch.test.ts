import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";

/**
 * A watch switched from the explorer to the node, or from the node to the explorer, in a
 * later config over the same store: its new reader starts where the old one left it, not
 * where the new source is, so that the switch skips no block. Each config starts at
 * `latest`, as most do: without the link, a new source would start at the head.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-source-switch-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 47, initialBlocks: 30 });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

const WATCHES = (a: Simulator["addresses"]) => `
watches:
  - { name: token, contract: "${a.busyToken}", events: ["Transfer(address indexed from, address indexed to, uint256 value)", "Approval(address indexed owner, address indexed spender, uint256 value)"] }
  - { name: holder, account: "${a.busyWallet}" }
  - { name: blocks, every_block: true }
rules:
  - { name: token-logs, watch: token, notify: [out] }
  - { name: holder-moves, watch: holder, notify: [out] }
  - { name: failed-calls, watch: blocks, when: { failed: true }, notify: [out] }
sinks:
  out: { type: console }`;

function configText(store: string, source: "explorer" | "node", start: string | number): string {
  return `
explorer: { base_url: "${sim.url}", requests_per_second: 100000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, requests_per_second: 100000, traces: true }
store: { path: "${join(dir.path, store)}" }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *", start: ${start}, jitter: 0s, source: ${source} }
${WATCHES(sim.addresses)}
`;
}

/** One pass of a config over its store: the ids it has queued so far (rule and alert id). */
async function pass(text: string): Promise<Set<string>> {
  const daemon = await createDaemon(quietCommon(), { config: configFromText(text) });
  try {
    const { results } = await daemon.engine.runOnce();
    expect(results.filter((r) => r.error !== undefined)).toEqual([]);
    return new Set((await daemon.store.listOutbox()).map((e) => `${e.rule} ${e.alert.id}`));
  } finally {
    await daemon.stop();
  }
}

describe("a watch switched between the explorer and the node", () => {
  it.each([
    ["the explorer", "the node", "explorer", "node"],
    ["the node", "the explorer", "node", "explorer"],
  ] as const)("from %s to %s: the new reader starts where the old one left off", async (_from, _to, before, after) => {
    const store = `switch-${before}.db`;
    const from = sim.head();
    // Set at the head, then a first stretch read by the old reader.
    await pass(configText(store, before, "latest"));
    sim.mine(15);
    const first = await pass(configText(store, before, "latest"));
    sim.mine(15);
    // The new reader: a source it never had, in a config starting at latest.
    const all = await pass(configText(store, after, "latest"));
    const reference = await pass(configText(`reference-${before}.db`, "explorer", from + 1));
    for (const rule of ["token-logs", "holder-moves", "failed-calls"]) {
      expect([...first].some((id) => id.startsWith(`${rule} `)), `${rule} before the switch`).toBe(true);
      expect([...all].some((id) => !first.has(id) && id.startsWith(`${rule} `)), `${rule} after the switch`).toBe(true);
    }
    expect([...all].sort()).toEqual([...reference].sort());
  });
});
