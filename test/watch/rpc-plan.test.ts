import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/explorer/operations.js";
import { formatPlan } from "../../src/cli/commands/plan.js";
import { planCredits } from "../../src/watch/credit-plan.js";
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
    expect(plan.rpc).toEqual({ absenceSources: [], balanceWatches: [{ watch: "payer", schedule: "*/30 * * * * *", readingsPerDay: 2880, callsPerReading: 3, callsPerDay: 8640 }], startupCalls: 4, callsPerDay: 8640 });
    expect(formatPlan(plan, config, "config.yaml")).toContain("watch payer: 2,880 readings a day (*/30 * * * * *) × 3 calls = 8,640 calls");
    expect(formatPlan(plan, config, "config.yaml")).toContain("JSON-RPC at rpc.example (no explorer credits): 8,640 calls a day for balances (0.10 a second on average; chain.requests_per_second: 10), 4 at start-up");
  });
});
