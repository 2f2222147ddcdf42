import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/explorer/operations.js";
import { formatPlan } from "../../src/cli/commands/plan.js";
import { planCredits, planSourceChoices } from "../../src/watch/credit-plan.js";
import { configFromText } from "../helpers/harness.js";

const A = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;

describe("plan of token and balance watches", () => {
  it("counts the explorer credits of token watches and the JSON-RPC calls of balance watches", () => {
    const config = configFromText(`
chain: { rpc_url: "https://rpc.example" }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *" }
watches:
  - { name: hot, account: "${A(1)}", tokens: ["${A(0xa)}", "${A(0xb)}"] }
  - { name: other-hot, account: "${A(2)}", tokens: ["${A(0xa)}"] }
  - { name: payer, balance: ["${A(3)}", "${A(4)}"], tokens: ["${A(0xb)}"], schedule: "*/30 * * * * *" }
rules:
  - { name: out, watch: hot, notify: [log], when: { direction: out, amount: { gte: "50000 tokens" } } }
  - { name: other-out, watch: other-hot, notify: [log], when: { direction: out } }
  - { name: low, watch: payer, notify: [log], when: { balance: { lt: "100 KAIA" } } }
sinks:
  log: { type: console }
`);
    const plan = planCredits(config, { dayMs: Date.UTC(2026, 0, 5) });
    // Two tokens, two sources: the watches of token 0xa share one.
    expect(plan.sources.map((s) => s.description)).toHaveLength(2);
    const cost = OPERATIONS.accountEventLogs.cost;
    expect(plan.creditsPerDay).toBe(2 * 8640 * cost);
    // 2880 readings × (eth_blockNumber + 2 addresses × KAIA): the token is read by no rule.
    expect(plan.rpc).toEqual({ absenceSources: [], balanceWatches: [{ watch: "payer", schedule: "*/30 * * * * *", readingsPerDay: 2880, callsPerReading: 3, callsPerDay: 8640 }], logSources: [], startupCalls: 4, callsPerDay: 8640 });
    expect(formatPlan(plan, config, "config.yaml")).toContain("watch payer: 2,880 readings a day (*/30 * * * * *) × 3 calls = 8,640 calls");
    expect(formatPlan(plan, config, "config.yaml")).toContain("JSON-RPC at rpc.example (no explorer credits): 8,640 calls a day for balances (0.10 a second on average; chain.requests_per_second: 10), 4 at start-up");
  });

  it("counts the node's log queries of node-read watches against chain.requests_per_second, and what each source choice costs", () => {
    const text = (source: string) => `
chain: { rpc_url: "https://rpc.example", requests_per_second: 0.05 }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *", source: ${source} }
watches:
  - { name: hot, account: "${A(1)}", tokens: ["${A(0xa)}", "${A(0xb)}"] }
  - { name: token, contract: "${A(0xc)}", events: ["Transfer(address indexed from, address indexed to, uint256 value)", "Approval(address,address,uint256)"] }
  - { name: nfts, collection: "${A(0xd)}" }
rules:
  - { name: out, watch: hot, source: event_logs, notify: [log], when: { direction: out } }
  - { name: events, watch: token, notify: [log] }
  - { name: moves, watch: nfts, notify: [log] }
sinks:
  log: { type: console }
`;
    const explorer = configFromText(text("explorer"));
    const node = configFromText(text("node"));
    const plan = planCredits(node, { dayMs: Date.UTC(2026, 0, 5) });
    expect(plan.sources).toEqual([]);
    expect(plan.creditsPerDay).toBe(0);
    // One query a window per filter, for every watch of a family: 8,640 windows of 10 s. Event
    // logs have three filters (the contract's events; the tokens from, and to, the account).
    expect(plan.rpc.logSources.map((l) => [l.family, l.watches, l.queriesPerWindow, l.queriesPerDay])).toEqual([
      ["event_logs", ["hot", "token"], 3, 3 * 8640],
      ["nft_transfers", ["nfts"], 1, 8640],
    ]);
    const choices = planSourceChoices(node, { dayMs: Date.UTC(2026, 0, 5) });
    const printed = formatPlan(plan, node, "config.yaml", { choices });
    expect(printed).toContain("event logs (*/10 * * * * *): 25,920 log queries a day (eth_getLogs, 3 a window: one per filter and per chain.max_request_bytes of its addresses and topics), shared by 2 watches: 25,920 calls");
    expect(printed).toContain("exceed chain.requests_per_second (0.05)");
    const own = planCredits(explorer, { dayMs: Date.UTC(2026, 0, 5) });
    expect(choices).toEqual([
      { source: "explorer", current: false, creditsPerDay: own.creditsPerDay, explorerRequestsPerDay: own.requestsPerDay, nodeRequestsPerDay: 0 },
      { source: "node", current: true, creditsPerDay: 0, explorerRequestsPerDay: 0, nodeRequestsPerDay: 4 * 8640 },
      { source: "both", current: false, creditsPerDay: own.creditsPerDay, explorerRequestsPerDay: own.requestsPerDay, nodeRequestsPerDay: 4 * 8640 },
    ]);
    expect(own.creditsPerDay).toBeGreaterThan(0);
    expect(printed).toMatch(/node \(this config\) +0 +0 +34,560/);
  });

  it("counts a query per part of a filter longer than chain.max_request_bytes", () => {
    const contracts = Array.from({ length: 200 }, (_, i) => `  - { name: c${i}, contract: "${A(0x1000 + i)}" }`).join("\n");
    const config = configFromText(`
chain: { rpc_url: "https://rpc.example", max_request_bytes: 4096 }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *", source: node }
watches:
${contracts}
rules:
  - { name: any, watch: c0, notify: [log] }
${Array.from({ length: 199 }, (_, i) => `  - { name: r${i + 1}, watch: c${i + 1}, notify: [log] }`).join("\n")}
sinks:
  log: { type: console }
`);
    // 4,096 bytes hold 86 addresses beside the query's envelope: 86 + 86 + 28.
    const [events] = planCredits(config, { dayMs: Date.UTC(2026, 0, 5) }).rpc.logSources;
    expect([events?.queriesPerWindow, events?.queriesPerDay]).toEqual([3, 3 * 8640]);
  });
});

describe("plan of internal transactions from the node's traces (chain.traces)", () => {
  it("counts one trace and one block time a block for every watch, and the source choices with every_block", () => {
    const text = (source: string) => `
chain: { rpc_url: "https://rpc.example", traces: true }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *", source: ${source} }
watches:
  - { name: blocks, every_block: true }
  - { name: hot, account: "${A(1)}", sources: [internal_transactions] }
  - { name: cold, account: "${A(2)}", sources: [internal_transactions] }
rules:
  - { name: failed, watch: blocks, notify: [log], when: { failed: true } }
  - { name: hot-in, watch: hot, notify: [log], when: { to: "${A(1)}" } }
  - { name: cold-out, watch: cold, notify: [log], when: { from: "${A(2)}" } }
sinks:
  log: { type: console }
`;
    const dayMs = Date.UTC(2026, 0, 5);
    const node = configFromText(text("node"));
    const plan = planCredits(node, { dayMs });
    expect(plan.sources).toEqual([]);
    expect(plan.creditsPerDay).toBe(0);
    expect(plan.rpc.traces).toEqual({ key: expect.stringMatching(/^src_/), watches: ["blocks", "hot", "cold"], schedule: "*/10 * * * * *", traceReadsPerDay: 86_400, callsPerDay: 172_800 });
    expect(plan.rpc.callsPerDay).toBe(172_800);
    const out = formatPlan(plan, node, "config.yaml", { choices: planSourceChoices(node, { dayMs }) });
    expect(out).toContain("internal transactions (*/10 * * * * *): 86,400 traces a day (debug_traceBlockByNumber, one per block) and as many block times (eth_getBlockByNumber), shared by 3 watches: 172,800 calls");
    // Operation 8 for all three (the accounts' filter on every block's records) from the explorer; nothing from the node.
    expect(planSourceChoices(node, { dayMs }).map((c) => [c.source, c.current, c.creditsPerDay, c.nodeRequestsPerDay])).toEqual([
      ["explorer", false, 86_400, 0],
      ["node", true, 0, 172_800],
      ["both", false, 86_400, 172_800],
    ]);
    expect(out).toContain("source choices (the log families of contract, collection and account watches, and with chain.traces the internal transactions of account and every_block watches;");
    // Without chain.traces every_block is the explorer's, whatever defaults.source says.
    const untraced = configFromText(text("node").replace("traces: true", "traces: false"));
    expect(planCredits(untraced, { dayMs }).rpc.traces).toBeUndefined();
    expect(planCredits(untraced, { dayMs }).creditsPerDay).toBe(86_400);
  });
});
