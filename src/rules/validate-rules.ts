import type { WitnessRole } from "../model/witness-role.js";
import type { RecordFamily } from "../model/record.js";
import type { ConditionIssue, ConditionPath } from "./parse-condition.js";
import { compileCondition, type CompiledCondition } from "./compile-condition.js";
import type { TokenFieldContext } from "../families/field-kinds.js";

export interface RuleConditionInput {
  name: string;
  family: RecordFamily;
  when: unknown;
  watchedAccounts?: ReadonlySet<string>;
  /** A token watch's rule on its Transfer logs: the token fields, for one of its tokens. */
  token?: TokenFieldContext;
  /** Where its records are read, when the node may make them. */
  reader?: WitnessRole | "both";
}

/**
 * Compiles one rule's `when`, or returns every problem with its full path in the config
 * (e.g. ["rules", 3, "when", "all", 1, "amount", "gte"]) and a message that names the rule
 * and the place inside `when`. `at` is where the `when` sits.
 */
export function compileRuleCondition(rule: RuleConditionInput, at: ConditionPath): { ok: true; condition: CompiledCondition } | { ok: false; issues: ConditionIssue[] } {
  const compiled = compileCondition(rule.when, {
    family: rule.family,
    ...(rule.watchedAccounts === undefined ? {} : { watchedAccounts: rule.watchedAccounts }),
    ...(rule.token === undefined ? {} : { token: rule.token }),
    ...(rule.reader === undefined ? {} : { reader: rule.reader }),
  });
  if (compiled.ok) return { ok: true, condition: compiled };
  return {
    ok: false,
    issues: compiled.issues.map((issue) => {
      const inside = issue.path.length ? `when.${formatPath(issue.path)}` : "when";
      return { path: [...at, ...issue.path], message: `rule "${rule.name}", ${inside}: ${issue.message}` };
    }),
  };
}

/** all.1.amount.gte → all[1].amount.gte, as a person reads it next to the YAML. */
export function formatPath(path: ConditionPath): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}
