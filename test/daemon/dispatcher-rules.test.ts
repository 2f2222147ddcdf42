import { describe, expect, it } from "vitest";
import { dispatcherRulesOf } from "../../src/daemon/dispatcher-rules.js";
import { EXAMPLE_ENV, EXAMPLE_TEXT } from "../helpers/example-config.js";
import { loadedFromText } from "../helpers/harness.js";


describe("the daemon's dispatcher rules, made from the config when looked up", () => {
  it("finds every rule of config.example.yaml (each source and kind) with its group, cooldown and routing", () => {
    const { config, compiled } = loadedFromText(EXAMPLE_TEXT, EXAMPLE_ENV);
    const rules = dispatcherRulesOf(config, compiled);
    expect(config.rules.length).toBeGreaterThan(5);
    for (const rule of config.rules) {
      expect(rules.get(rule.name)).toEqual({
        name: rule.name,
        group: rule.group && { windowMs: rule.group.window, max: rule.group.max, by: rule.group.by },
        cooldownMs: rule.cooldown,
        cooldownKey: rule.cooldown_key,
        routed: rule.routed,
      });
    }
    // The example's rules have a group, a cooldown with a key, and a rule the routes send.
    expect(config.rules.some((rule) => rule.group !== undefined && rule.cooldown !== undefined)).toBe(true);
    expect(rules.longestCooldownMs).toBe(Math.max(...config.rules.map((rule) => rule.cooldown ?? 0)));
    expect(rules.get("not-a-rule")).toBeUndefined();
  });
});
