import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { configErrorOf, issueAt } from "./helpers.js";

// The same checks `validate`, `run` and `once` run.
const OPTIONS = { fileName: "test.yaml", env: {}, checks: CONFIG_CHECKS };

/*
 * Issue 41: a number whose unit the field does not say is refused, at its key path and line,
 * with the ways to write it, the one that keeps what it meant before first (`base_units` for an
 * argument, KAIA for a native amount): `args.value: { gt: 1000000 }` on an 18-decimal token let
 * every transfer through, and `amount: "1000"` was read as KAIA without saying so.
 */
const TEXT = `explorer: { base_url: "http://127.0.0.1:1" }
chain: { rpc_url: "http://127.0.0.1:2" }
watches:
  - { name: token, contract: "0x3333333333333333333333333333333333333333", events: ["Transfer(address,address,uint256)"] }
  - { name: hot, account: "0x1111111111111111111111111111111111111111", sources: [internal_transactions, transactions] }
rules:
  - { name: big-transfer, watch: token, when: { "args.value": { gt: 1000000 } }, notify: [out] }
  - { name: big-call, watch: hot, source: internal_transactions, when: { amount: { gte: "1000" } }, notify: [out] }
  - { name: big-send, watch: hot, source: transactions, when: { amount: 5 }, notify: [out] }
  - { name: fine, watch: token, when: { all: [{ "args.value": { gt: "10^24 base_units" } }, { "args.value": { lt: "1000000 KAIA" } }] }, notify: [out] }
sinks:
  out: { type: console }
`;

describe("amounts whose unit the field does not say", () => {
  it("are refused at their key path and line, with the three ways to write them", () => {
    const error = configErrorOf(() => parseConfigText(TEXT, OPTIONS));
    const at = issueAt(TEXT, error);
    at(
      "1000000 }",
      'rules[0].when["args.value"].gt',
      'args.value: 1000000 has no unit, and an argument does not say its own: write "1000000 base_units" (the integer as the contract holds it: what a number without a unit meant until now), "1000000 KAIA" (an 18-decimal amount), or "1000000 USDT" (whole tokens by symbol, in the rules of an account watch with tokens:)',
    );
    at('"1000" }', "rules[1].when.amount.gte", 'amount: 1000 has no unit: write "1000 KAIA" (what a number without a unit meant until now), "1000 gkei", or "1000 kei" (the smallest unit, 10^-18 KAIA)');
    at("amount: 5 }", "rules[2].when.amount", 'amount: 5 has no unit: write "5 KAIA"');
    // The fourth rule is written in explicit units: no issue of its own.
    expect(error.format()).not.toContain("rules[3]");
  });
});
