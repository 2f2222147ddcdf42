import type { Config, RuleConfig } from "../config/types.js";
import { compiledOf, type CompiledConfig } from "../config/compile-config.js";
import { compileSourceRule } from "./compile-source-rule.js";
import { planSources, type Plan } from "./plan.js";
import type { SourceRule } from "./source-rule.js";

export interface PlanFromConfigOptions {
  /** Plan only these rules of the config (replay and explain take one); default: every rule. */
  rules?: readonly RuleConfig[];
  /**
   * The config's compile (the loader's, with the token rules compiled in their tokens'
   * units once readConfigTokens has read them: needed to run those rules). Absent: compiled
   * here, for a config built in code.
   */
  compiled?: CompiledConfig;
  /** The UTC day whose schedules the planner costs (default: a fixed reference Monday). */
  dayMs?: number;
  /**
   * false: the sources only, for counting them (`plan`, `validate`, `cursors`): their rules
   * are left uncompiled (inert), which is a quarter of planning 10,000 watches. Default true.
   */
  compile?: boolean;
}

/** A rule of a plan that is only counted: never run. */
function inertRule(rule: RuleConfig): SourceRule {
  return {
    name: rule.name,
    watch: rule.watch,
    notify: rule.notify,
    test: () => false,
    toAlert: () => {
      throw new Error(`rule ${rule.name} was planned without compiling (compile: false) and cannot make alerts`);
    },
  };
}

/**
 * The sources a config polls, each with its rules compiled: the one place the daemon,
 * `replay`, `explain` and `plan` get their sources from, so that they cannot disagree on
 * which sources exist, their keys, or what a rule matches.
 */
export function planFromConfig(config: Config, options: PlanFromConfigOptions = {}): Plan {
  const compiled = options.compile === false ? undefined : (options.compiled ?? compiledOf(config));
  return planSources({
    network: config.chain.network,
    watches: config.watches,
    rules: options.rules ?? config.rules,
    defaults: config.defaults,
    apiPlan: config.explorer.api_plan,
    requestsPerSecond: config.explorer.requests_per_second,
    dayMs: options.dayMs,
    traces: config.chain.traces,
    compileRule:
      compiled === undefined
        ? inertRule
        : (rule, watch, family, definition) => {
            const compiledRule = compiled.rules.get(rule.name);
            if (compiledRule === undefined) throw new Error(`rule ${rule.name} is not in the config's compile`);
            return compileSourceRule(config, compiledRule, watch, family, definition, compiled.tokens);
          },
  });
}
