import { describe, expect, it } from "vitest";
import { checkRuleConditions, formatPath, validateRuleConditions } from "../../src/rules/validate-rules.js";
import { HOT_WALLET } from "./fixtures.js";

describe("validateRuleConditions", () => {
  it("gives full config paths and names the rule and the place inside when", () => {
    const issues = validateRuleConditions([
      { name: "fine", family: "internal_transactions", when: { status: "Fail" } },
      { name: "big-outflow", family: "internal_transactions", when: { all: [{ from: HOT_WALLET }, { amount: { gte: "abc" } }] } },
      { name: "mints", family: "nft_transfers", when: { direction: "in" } },
    ]);
    expect(issues).toHaveLength(2);
    expect(issues[0]?.path).toEqual(["rules", 1, "when", "all", 1, "amount", "gte"]);
    expect(issues[0]?.message).toMatch(/^rule "big-outflow", when\.all\[1\]\.amount\.gte: amount: "abc" is not an amount/);
    expect(issues[1]?.path).toEqual(["rules", 2, "when", "direction"]);
    expect(issues[1]?.message).toMatch(/^rule "mints", when\.direction: .*account/);
  });

  it("uses a base path or the rule's own path", () => {
    const when = { nope: 1 };
    expect(validateRuleConditions([{ name: "r", family: "event_logs", when }], ["config", "rules"])[0]?.path).toEqual(["config", "rules", 0, "when", "nope"]);
    expect(validateRuleConditions([{ name: "r", family: "event_logs", when, path: ["rules", 7, "when"] }])[0]?.path).toEqual(["rules", 7, "when", "nope"]);
  });

  it("formats paths the way they read in YAML", () => {
    expect(formatPath(["all", 1, "amount", "gte"])).toBe("all[1].amount.gte");
    expect(formatPath(["topics[1]"])).toBe("topics[1]");
  });
});

describe("checkRuleConditions (the config loader's check)", () => {
  const config = {
    watches: [
      { name: "hot-wallet", account: HOT_WALLET },
      { name: "collection", collection: "0x…" },
    ],
    rules: [
      { name: "incoming", watch: "hot-wallet", source: "nft_transfers", when: { direction: "in" } },
      { name: "collection-in", watch: "collection", source: "nft_transfers", when: { direction: "in" } },
      { name: "unknown-watch", watch: "nope", source: "nft_transfers", when: { bad: 1 } },
      { name: "bad-source", watch: "hot-wallet", source: "blocks", when: { bad: 1 } },
      { name: "every-call", watch: "hot-wallet", source: "internal_transactions" },
      { name: "typo", watch: "hot-wallet", source: "internal_transactions", when: { status: "Failed" } },
    ],
  };

  it("allows direction on account watches only, and leaves wrong watches and sources to the loader", () => {
    const issues = checkRuleConditions(config);
    expect(issues.map((i) => i.path)).toEqual([
      ["rules", 1, "when", "direction"],
      ["rules", 5, "when", "status"],
    ]);
    expect(issues[0]?.message).toMatch(/rule "collection-in"/);
  });

  it("is silent on a good config", () => {
    expect(checkRuleConditions({ watches: config.watches, rules: [config.rules[0], config.rules[4]] as typeof config.rules })).toEqual([]);
    expect(checkRuleConditions({})).toEqual([]);
  });
});
