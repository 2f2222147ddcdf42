import { KaiawatchError } from "../common/errors.js";
import type { Config, RuleConfig, WatchConfig } from "../config/types.js";
import { buildAlert } from "../rules/build-alert.js";
import { compileCondition } from "../rules/compile-condition.js";
import type { RecordFamily } from "../model/record.js";
import type { SourceRule } from "./source-rule.js";

/**
 * Compiles a rule for one of its sources: its condition once, and the alert it makes of a
 * matching record. The watched account matters to both (`direction`, the account link).
 * The config checks have already proven that the condition compiles; a failure here means
 * an unchecked config and stops the caller.
 */
export function compileSourceRule(config: Config, rule: RuleConfig, watch: WatchConfig, family: RecordFamily): SourceRule {
  const watchedAccount = watch.kind === "account" ? watch.account : undefined;
  const compiled = compileCondition(rule.when, { family, watchedAccount });
  if (!compiled.ok) throw new KaiawatchError("KW_CONFIG_INVALID", `rule ${rule.name}: ${compiled.issues.map((i) => i.message).join("; ")}`);
  return {
    name: rule.name,
    watch: rule.watch,
    notify: rule.notify,
    enrich: rule.enrich,
    test: compiled.test,
    condition: compiled.node,
    toAlert: (record, now) => buildAlert({ rule: { name: rule.name, summary: rule.summary, severity: rule.severity }, watch: rule.watch, record, network: config.chain.network, explorerUrl: config.chain.explorer_url, now, watchedAccount }),
  };
}
