import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { createTestDatabase, startPostgres, type TestPostgres } from "../helpers/postgres.js";

/**
 * The log families read through the explorer, the node's eth_getLogs, or both, on the
 * simulator's one chain: the same alerts under the same ids whichever reads them, one
 * delivery each with both, and with both the explorer's outage costs no alert.
 */
let sim: Simulator;
let postgres: TestPostgres | undefined;
const dir = tempDir("kaiawatch-node-logs-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 23, initialBlocks: 120 });
});
afterAll(async () => {
  await sim.close();
  await postgres?.dispose();
  dir.remove();
});

type Choice = "explorer" | "node" | "both";

function configFor(source: Choice, start: number, name: string, options: { storeUrl?: string; explorer?: string } = {}) {
  const a = sim.addresses;
  return configFromText(`
explorer: { base_url: "${sim.url}", requests_per_second: 100000${options.explorer === undefined ? "" : `, ${options.explorer}`} }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, requests_per_second: 100000 }
store: ${options.storeUrl === undefined ? `{ path: "${join(dir.path, `${name}.db`)}" }` : `{ url: "${options.storeUrl}" }`}
status: { listen: false }
defaults: { schedule: "*/10 * * * * *", start: ${start}, jitter: 0s, source: ${source} }
watches:
  - { name: token, contract: "${a.busyToken}", events: ["Transfer(address indexed from, address indexed to, uint256 value)", "Approval(address,address,uint256)"] }
  - { name: other-token, contract: "${a.tokens[1]}" }
  - { name: collection, collection: "${a.busyCollection}" }
  - { name: multi, collection: "${a.kip37Collection}" }
  - { name: holder, account: "${a.busyWallet}" }
  - { name: holder-in, account: "${a.busyWallet}", nft_contract: "${a.busyCollection}" }
  - { name: wallet-tokens, account: "${a.busyWallet}", tokens: ["${a.busyToken}", "${a.tokens[1]}"] }
rules:
  - { name: token-events, watch: token, notify: [out] }
  - { name: other-events, watch: other-token, notify: [out] }
  - { name: collection-moves, watch: collection, notify: [out] }
  - { name: multi-moves, watch: multi, notify: [out] }
  - { name: holder-moves, watch: holder, notify: [out] }
  - { name: holder-in-moves, watch: holder-in, notify: [out] }
  - { name: wallet-token-transfers, watch: wallet-tokens, source: event_logs, notify: [out] }
sinks:
  out: { type: file, path: "${join(dir.path, `${name}.jsonl`)}" }
`);
}

/** One pass over every source up to the head, the outbox delivered. */
async function once(source: Choice, start: number, name: string, options: { storeUrl?: string; explorer?: string } = {}) {
  const daemon = await createDaemon(quietCommon(), { config: configFor(source, start, name, options) });
  try {
    // The daemon's own pass (as `kaiawatch once`): on PostgreSQL it leases the sources first.
    const { results } = (await daemon.runOnce({ drainTimeoutMs: 20_000 })).scan;
    const entries = await daemon.store.listOutbox();
    const cursors = await Promise.all(daemon.plan.sources.map(async (s) => ({ operation: s.definition.operation, block: (await daemon.store.getCursor(s.key))?.block })));
    return {
      failed: results.filter((r) => r.error !== undefined).map((r) => r.key),
      ids: entries.map((e) => `${e.rule} ${e.alert.id}`).sort(),
      operations: daemon.plan.sources.map((s) => s.definition.operation).sort(),
      cursors,
      delivered: readJsonLines<AlertDocument>(join(dir.path, `${name}.jsonl`)).map((a) => `${a.rule} ${a.id}`),
    };
  } finally {
    await daemon.stop();
  }
}

describe("event logs and NFT transfers from the node", () => {
  it("give the same alerts under the same ids through the explorer, the node and both", async () => {
    const start = sim.head() - 100;
    const explorer = await once("explorer", start, "same-explorer");
    const node = await once("node", start, "same-node");
    const both = await once("both", start, "same-both");
    expect(explorer.operations).toEqual(["accountEventLogs", "accountEventLogs", "accountNftTransfers", "nftTransfers", "nftTransfers"]);
    expect(node.operations).toEqual(["nodeEventLogs", "nodeNftTransfers"]);
    expect(both.operations).toEqual([...explorer.operations, ...node.operations].sort());
    for (const rule of ["token-events", "other-events", "collection-moves", "multi-moves", "holder-moves", "holder-in-moves", "wallet-token-transfers"]) expect(explorer.ids.some((id) => id.startsWith(`${rule} `)), rule).toBe(true);
    expect(node.ids).toEqual(explorer.ids);
    expect(both.ids).toEqual(explorer.ids);
    // Both sources read every record; each alert went out once.
    expect(both.delivered.sort()).toEqual(explorer.ids);
  }, 120_000);

  it.each([
    ["5xx", { serverErrorRate: 1 }],
    ["401", { apiKey: "another-key" }],
  ] as const)("with both, carry every alert through an explorer failing with %s, once each; the explorer's cursors catch up", async (label, fault) => {
    const start = sim.head() - 60;
    const reference = await once("explorer", start, `outage-reference-${label}`);
    const name = `outage-${label}`;
    sim.setFaults(fault);
    let during: Awaited<ReturnType<typeof once>>;
    try {
      during = await once("both", start, name, { explorer: "max_retries: 0" });
    } finally {
      sim.setFaults({ serverErrorRate: 0, apiKey: undefined });
    }
    expect(during.failed.length).toBeGreaterThan(0);
    expect(during.cursors.filter((c) => c.operation.startsWith("node")).every((c) => c.block === sim.head())).toBe(true);
    expect(during.ids).toEqual(reference.ids);
    expect(during.delivered.sort()).toEqual(reference.ids);
    const after = await once("both", start, name);
    expect(after.failed).toEqual([]);
    expect(after.cursors.every((c) => c.block === sim.head()), JSON.stringify(after.cursors)).toBe(true);
    // The explorer's copies were recognised: nothing queued or sent again.
    expect(after.ids).toEqual(reference.ids);
    expect(after.delivered.sort()).toEqual(reference.ids);
  }, 120_000);

  it("with both on PostgreSQL, the second source's copy of an alert is not queued or sent again", async () => {
    postgres ??= await startPostgres();
    const start = sim.head() - 40;
    const reference = await once("explorer", start, "pg-reference");
    const storeUrl = await createTestDatabase(postgres.url);
    const both = await once("both", start, "pg-both", { storeUrl });
    expect(both.ids).toEqual(reference.ids);
    expect(both.delivered.sort()).toEqual(reference.ids);
  }, 120_000);
});
