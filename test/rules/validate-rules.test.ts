import { describe, expect, it } from "vitest";
import { compileRuleCondition, formatPath } from "../../src/rules/validate-rules.js";
import { HOT_WALLET } from "./fixtures.js";

describe("compileRuleCondition", () => {
  it("gives full config paths and names the rule and the place inside when", () => {
    expect(compileRuleCondition({ name: "fine", family: "internal_transactions", when: { status: "Fail" } }, ["rules", 0, "when"]).ok).toBe(true);
    const outflow = compileRuleCondition({ name: "big-outflow", family: "internal_transactions", when: { all: [{ from: HOT_WALLET }, { amount: { gte: "abc" } }] } }, ["rules", 1, "when"]);
    const mints = compileRuleCondition({ name: "mints", family: "nft_transfers", when: { direction: "in" } }, ["rules", 2, "when"]);
    const issues = [outflow, mints].flatMap((result) => (result.ok ? [] : result.issues));
    expect(issues).toHaveLength(2);
    expect(issues[0]?.path).toEqual(["rules", 1, "when", "all", 1, "amount", "gte"]);
    expect(issues[0]?.message).toMatch(/^rule "big-outflow", when\.all\[1\]\.amount\.gte: amount: "abc" is not an amount/);
    expect(issues[1]?.path).toEqual(["rules", 2, "when", "direction"]);
    expect(issues[1]?.message).toMatch(/^rule "mints", when\.direction: .*account/);
  });

  it("puts the problems under the path given", () => {
    const result = compileRuleCondition({ name: "r", family: "event_logs", when: { nope: 1 } }, ["config", "rules", 7, "when"]);
    expect(result.ok === false && result.issues[0]?.path).toEqual(["config", "rules", 7, "when", "nope"]);
  });

  it("formats paths the way they read in YAML", () => {
    expect(formatPath(["all", 1, "amount", "gte"])).toBe("all[1].amount.gte");
    expect(formatPath(["topics[1]"])).toBe("topics[1]");
  });
});
