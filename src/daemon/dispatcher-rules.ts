import type { CompiledConfig } from "../config/compile-config.js";
import type { Config } from "../config/types.js";
import type { DispatcherRules } from "../notify/dispatcher.js";

/**
 * The dispatcher's rules, each made from its config when looked up (a small object, at most a
 * few per alert sent) rather than one kept per rule: `compiled` already holds the config's
 * rules by name.
 */
export function dispatcherRulesOf(config: Config, compiled: CompiledConfig): DispatcherRules {
  let longestCooldownMs = 0;
  for (const rule of config.rules) longestCooldownMs = Math.max(longestCooldownMs, rule.cooldown ?? 0);
  return {
    get: (name) => {
      const rule = compiled.rules.get(name)?.rule;
      if (rule === undefined) return undefined;
      return {
        name: rule.name,
        group: rule.group && { windowMs: rule.group.window, max: rule.group.max, by: rule.group.by },
        cooldownMs: rule.cooldown,
        cooldownKey: rule.cooldown_key,
        routed: rule.routed,
      };
    },
    longestCooldownMs,
  };
}
