import { describe, expect, it } from "vitest";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { planCredits } from "../../src/watch/credit-plan.js";
import { formatPlan } from "../../src/cli/commands/plan.js";
import { summarize } from "../../src/cli/commands/validate.js";
import { configFromText } from "../helpers/harness.js";
import { HOT_WALLET, TOKEN, internalTx } from "../rules/fixtures.js";

const OTHER = "0x00000000000000000000000000000000000000aa";
const configOf = (apiPlan: string, via = "auto") =>
  configFromText(`
explorer: { base_url: "http://127.0.0.1:9", api_plan: ${apiPlan} }
chain: { rpc_url: "http://127.0.0.1:9", explorer_url: "https://kaiascan.io" }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *" }
watches:
  - { name: hot, account: "${HOT_WALLET}", sources: [internal_transactions], via: ${via} }
  - { name: other, account: "${OTHER}", sources: [internal_transactions], via: ${via} }
  - { name: token, contract: "${TOKEN}", events: ["Transfer(address,address,uint256)", "Approval(address,address,uint256)"], via: ${via} }
rules:
  - { name: hot-calls, watch: hot, notify: [out] }
  - { name: other-calls, watch: other, notify: [out] }
  - { name: token-logs, watch: token, notify: [out] }
sinks:
  out: { type: console }
`);

const operations = (apiPlan: string, via?: string) => planFromConfig(configOf(apiPlan, via)).sources.map((s) => s.definition.operation).sort();

describe("the cost-based planner", () => {
  it("serves accounts' internal transactions from operation 8 and a contract's events from one unfiltered source", () => {
    expect(operations("FREE")).toEqual(["accountEventLogs", "blockInternalTransactions"]);
    // Two wallets on op 7 every 10 s cost 345,600 credits a day; op 8 costs 86,400 on any plan.
    expect(operations("PRO_PLUS")).toEqual(["accountEventLogs", "blockInternalTransactions"]);
  });

  it("keeps a watch pinned to its own sources", () => {
    expect(operations("PRO_PLUS", "own")).toEqual(["accountEventLogs", "accountEventLogs", "accountInternalTransactions", "accountInternalTransactions"]);
  });

  it("filters a shared source's records to each watch as its own source would", () => {
    const source = planFromConfig(configOf("FREE")).sources.find((s) => s.definition.operation === "blockInternalTransactions")!;
    const mine = internalTx({ from: HOT_WALLET, to: TOKEN });
    const neither = internalTx({ from: TOKEN, to: "0x00000000000000000000000000000000000000bb" });
    const matched = (record: ReturnType<typeof internalTx>) => source.rules.filter((r) => r.test(record)).map((r) => r.name);
    expect(matched(mine)).toEqual(["hot-calls"]);
    expect(matched(neither)).toEqual([]);
    expect(source.members?.map((m) => [m.watch, m.filter])).toEqual([
      ["hot", `from or to ${HOT_WALLET.toLowerCase()}`],
      ["other", `from or to ${OTHER}`],
    ]);
  });

  it("shows the choice and the rejected alternatives with their cost", () => {
    const config = configOf("FREE");
    const plan = planCredits(config, { dayMs: Date.UTC(2026, 0, 5) });
    const wallets = plan.choices.find((c) => c.watches.includes("hot"))!;
    expect(wallets.chosen.creditsPerDay).toBe(86_400);
    expect(wallets.own.creditsPerDay).toBe(2 * 8640 * 20);
    expect(wallets.rejected.map((r) => r.rejected)).toContain("operation 7 needs the PRO_PLUS API plan (explorer.api_plan is FREE)");
    const text = formatPlan(plan, config, "config.yaml");
    expect(text).toContain("choices (the cheapest operations that see every record each rule needs):");
    expect(text).toContain("watches hot, other: 86,400 credits/day, 259,200 less than one source per watch (345,600)");
    expect(text).toContain("watches token: 25,920 credits/day, 25,920 less than one source per watch (51,840)");
  });

  describe("the request rate, for the whole config", () => {
    const rated = (apiPlan: string, rps: number) =>
      configFromText(`
explorer: { base_url: "http://127.0.0.1:9", api_plan: ${apiPlan}, requests_per_second: ${rps} }
chain: { rpc_url: "http://127.0.0.1:9" }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *" }
watches:
  - { name: hot, account: "${HOT_WALLET}", sources: [internal_transactions] }
  - { name: token, contract: "${TOKEN}", events: ["Transfer(address,address,uint256)", "Approval(address,address,uint256)"], schedule: "* * * * * *" }
rules:
  - { name: hot-calls, watch: hot, notify: [out] }
  - { name: token-logs, watch: token, notify: [out] }
sinks:
  out: { type: console }
`);

    it("fits the sum of every group's requests in half of requests_per_second, though each group alone would fit", () => {
      // Cheapest: op 8 (1 request a second) and one unfiltered op 11 every second (1): 2 a second,
      // above 1.5, half of 3. Op 7 for the wallet every 10 s asks 0.1 a second for 86,400 more credits.
      const plan = planFromConfig(rated("PRO_PLUS", 3));
      expect(plan.sources.map((s) => s.definition.operation).sort()).toEqual(["accountEventLogs", "accountInternalTransactions"]);
      expect(plan.rate).toMatchObject({ fits: true, repairedGroups: 1, limit: 3, steadyLimit: 1.5 });
      expect(plan.rate.requestsPerSecond).toBeCloseTo(1.1, 5);
      const wallet = plan.choices.find((c) => c.watches.includes("hot"))!;
      expect(wallet.rejected[0]?.rejected).toBe("2.00 requests a second for the whole config: more than 50% of explorer.requests_per_second (3), the rest being kept for catching up");
      // With room to spare, the cheapest is kept.
      expect(planFromConfig(rated("PRO_PLUS", 4)).sources.map((s) => s.definition.operation).sort()).toEqual(["accountEventLogs", "blockInternalTransactions"]);
    });

    it("keeps the cheapest when nothing fits, and plan and validate warn with the numbers", () => {
      // FREE: op 7 is not allowed, and op 8 alone needs 1 request a second.
      const config = rated("FREE", 3);
      const plan = planFromConfig(config);
      expect(plan.sources.map((s) => s.definition.operation).sort()).toEqual(["accountEventLogs", "blockInternalTransactions"]);
      expect(plan.rate).toMatchObject({ fits: false, repairedGroups: 0 });
      const credits = planCredits(config, { dayMs: Date.UTC(2026, 0, 5) });
      const warning = credits.warnings.find((w) => w.code === "rate")?.message;
      expect(warning).toContain("the sources need 2.00 requests a second on average, more than 50% of explorer.requests_per_second (1.50 of 3)");
      // An hour behind: 3,600 requests of op 8 (one a block) and 4 of op 11 (windows of 1,000 blocks), at 1 spare request a second.
      expect(credits.catchUp).toMatchObject({ requestsPerHourBehind: 3_604, spareRequestsPerSecond: 1, secondsPerHourBehind: 3_604 });
      expect(warning).toContain("an hour behind (3,604 requests) takes 61 min to catch up");
      expect(summarize("config.yaml", config)).toContain("warning: the sources need 2.00 requests a second on average, more than 1.50");
    });
  });
});
