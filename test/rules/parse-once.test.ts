import { describe, expect, it } from "vitest";
import { compileCondition } from "../../src/rules/compile-condition.js";
import { parseBalanceCondition } from "../../src/rules/balance-condition.js";
import { balanceWatchesOf } from "../../src/watch/balance-watches.js";
import { checkTokenRules } from "../../src/watch/config-tokens.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import type { TokenInfo } from "../../src/chain/token-info.js";
import { configFromText } from "../helpers/harness.js";
import { HOT_WALLET } from "./fixtures.js";

const USDT = `0x${"c".repeat(40)}`;
const PAYER = `0x${"d".repeat(40)}`;

/** A rule's `when` is compiled once, at load, and every consumer gets that one result. */
const config = configFromText(`
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9", explorer_url: "https://kaiascan.io" }
status: { listen: false }
watches:
  - { name: hot, account: "${HOT_WALLET}", sources: [internal_transactions], schedule: "*/5 * * * * *" }
  - { name: payer, balance: ["${PAYER}"], tokens: ["${USDT}"], schedule: "*/30 * * * * *" }
rules:
  - { name: big-outflow, watch: hot, when: { all: [ { from: "${HOT_WALLET}" }, { amount: { gte: "1000 KAIA" } } ] }, notify: [out] }
  - { name: payer-usdt-low, watch: payer, notify: [out], when: { balance: { lt: "5 USDT" } } }
sinks:
  out: { type: console }
`);

describe("parse once", () => {
  it("the planner (daemon, explain, replay) uses the condition the config check compiled at load", () => {
    const rule = config.rules[0]!;
    const atLoad = compileCondition(rule.when, { family: "internal_transactions", watchedAccount: HOT_WALLET });
    expect(atLoad.ok).toBe(true);
    const daemon = planFromConfig(config).sources[0]!.rules[0]!;
    const explain = planFromConfig(config, { rules: [rule] }).sources[0]!.rules[0]!;
    expect(daemon.condition).toBe(atLoad.ok && atLoad.node);
    expect(explain.condition).toBe(daemon.condition);
  });

  it("a balance condition is parsed once for the check and the RPC plan, and once with the tokens read at start-up", () => {
    const rule = config.rules[1]!;
    const shape = parseBalanceCondition(rule.when, undefined, 1);
    expect(parseBalanceCondition(rule.when, undefined, 1)).toBe(shape);
    const tokens = new Map<string, TokenInfo>([[USDT, { address: USDT, decimals: 6, symbol: "USDT" }]]);
    expect(checkTokenRules(config, tokens)).toEqual([]);
    const [watch] = balanceWatchesOf(config, tokens);
    const again = balanceWatchesOf(config, new Map(tokens));
    expect(again[0]!.rules[0]!.condition).toBe(watch!.rules[0]!.condition);
    expect(watch!.rules[0]!.condition.tests.map((t) => [t.asset, t.holds(4_999_999n), t.holds(5_000_000n)])).toEqual([[USDT, true, false]]);
    // Other decimals are another condition, not the one kept.
    const other = balanceWatchesOf(config, new Map([[USDT, { address: USDT, decimals: 18, symbol: "USDT" }]]));
    expect(other[0]!.rules[0]!.condition).not.toBe(watch!.rules[0]!.condition);
  });
});
