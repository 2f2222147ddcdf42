import type { RecordFamily } from "../model/record.js";
import type { ConditionIssue, ConditionPath } from "./parse-condition.js";
import { compileCondition } from "./compile-condition.js";
import type { TokenFieldContext } from "../families/field-kinds.js";
import { isFamilyName } from "../families/registry.js";

export interface RuleConditionInput {
  name: string;
  family: RecordFamily;
  when: unknown;
  watchedAccount?: string;
  /** A token watch's rule on its Transfer logs: the token fields, for one of its tokens. */
  token?: TokenFieldContext;
  /** Where this rule's `when` sits in the config; default [...basePath, index, "when"]. */
  path?: ConditionPath;
}

/**
 * Checks the `when` of many rules at once and returns every problem with its full path
 * in the config (e.g. ["rules", 3, "when", "all", 1, "amount", "gte"]) and a message that
 * names the rule and the place inside `when`.
 */
export function validateRuleConditions(rules: readonly RuleConditionInput[], basePath: ConditionPath = ["rules"]): ConditionIssue[] {
  const issues: ConditionIssue[] = [];
  rules.forEach((rule, index) => {
    // Compiled, not only parsed: the planner and the engine then use this result (compileCondition keeps it).
    const parsed = compileCondition(rule.when, {
      family: rule.family,
      ...(rule.watchedAccount === undefined ? {} : { watchedAccount: rule.watchedAccount }),
      ...(rule.token === undefined ? {} : { token: rule.token }),
    });
    if (parsed.ok) return;
    const at = rule.path ?? [...basePath, index, "when"];
    for (const issue of parsed.issues) {
      const inside = issue.path.length ? `when.${formatPath(issue.path)}` : "when";
      issues.push({ path: [...at, ...issue.path], message: `rule "${rule.name}", ${inside}: ${issue.message}` });
    }
  });
  return issues;
}

/** The least a config must look like for checkRuleConditions; the loader's type fits it. */
export interface RulesConfigShape {
  watches?: ReadonlyArray<{ name?: unknown; account?: unknown; tokens?: unknown }>;
  rules?: ReadonlyArray<{ name?: unknown; watch?: unknown; source?: unknown; when?: unknown }>;
}

/**
 * A config check of the shape the loader runs, `(config) => issues`: every rule's `when`
 * against its source, with `direction` allowed for account watches. Rules whose watch or
 * source is itself wrong are skipped here: the loader reports those.
 */
export function checkRuleConditions(config: RulesConfigShape): ConditionIssue[] {
  const accounts = new Map<string, string | undefined>();
  const tokenWatches = new Set<string>();
  for (const watch of config.watches ?? []) {
    if (typeof watch.name !== "string") continue;
    accounts.set(watch.name, typeof watch.account === "string" ? watch.account : undefined);
    if (Array.isArray(watch.tokens) && watch.tokens.length > 0) tokenWatches.add(watch.name);
  }
  const inputs: RuleConditionInput[] = [];
  (config.rules ?? []).forEach((rule, index) => {
    if (typeof rule.watch !== "string" || !accounts.has(rule.watch)) return;
    if (typeof rule.source !== "string" || !isFamilyName(rule.source)) return;
    const account = accounts.get(rule.watch);
    inputs.push({
      name: typeof rule.name === "string" ? rule.name : `#${index + 1}`,
      family: rule.source as RecordFamily,
      when: rule.when,
      path: ["rules", index, "when"],
      ...(account === undefined ? {} : { watchedAccount: account }),
      // The tokens' decimals and symbols are read at start-up (checkTokenRules); here only the shape of amounts.
      ...(rule.source === "event_logs" && tokenWatches.has(rule.watch) ? { token: { info: undefined, otherSymbols: [] } } : {}),
    });
  });
  return validateRuleConditions(inputs);
}

/** all.1.amount.gte → all[1].amount.gte, as a person reads it next to the YAML. */
export function formatPath(path: ConditionPath): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}
