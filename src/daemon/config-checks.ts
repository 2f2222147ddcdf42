import type { ConfigCheck } from "../config/load-config.js";
import type { ConfigIssue } from "../config/errors.js";
import { validateSinkConfig } from "../notify/create-sink.js";
import { checkEnrichments } from "../config/check-enrichments.js";
import { tokenTransferFamily } from "../families/registry.js";
import { TOKEN_TRANSFER_TEMPLATE_VARIABLES, validateSummaryTemplate } from "../rules/summary-template.js";
import type { Config, RuleConfig } from "../config/types.js";

/** Each config's watches by name, made once: a find() per rule made the checks quadratic in the config's size. */
const watchesByName = new WeakMap<Config, Map<string, Config["watches"][number]>>();

/** A rule on the Transfer logs of an account watch's tokens. */
function isTokenRule(config: Config, rule: RuleConfig): boolean {
  let byName = watchesByName.get(config);
  if (byName === undefined) watchesByName.set(config, (byName = new Map(config.watches.map((w) => [w.name, w]))));
  const watch = byName.get(rule.watch);
  return (watch?.kind === "account" || watch?.kind === "accounts") && watch.tokens.length > 0 && rule.source === tokenTransferFamily().name;
}

/** The token transfer fields a record path cannot read, and what to write instead. */
const DECODED_TOKEN_FIELDS: Readonly<Record<string, string>> = {
  from: "write topics.1 (the sender as a 32-byte topic)",
  to: "write topics.2 (the recipient as a 32-byte topic)",
  direction: "write topics.1 or topics.2",
  amount: "write data (the amount in base units, as hex)",
  token: "write contract (the token's address)",
};

/**
 * What an absence rule (`expect`) cannot take: a balance watch is read on its schedule,
 * not counted; its alerts are about records that did not arrive, so there is nothing to
 * enrich and no record for a summary template to read (docs/absence.md).
 */
function absenceRuleIssues(rule: RuleConfig, index: number): ConfigIssue[] {
  if (rule.expect === undefined) return [];
  const issues: ConfigIssue[] = [];
  if (rule.source === "balances") issues.push({ path: ["rules", index, "expect"], message: `rule "${rule.name}" reads balances: expect counts the records of an account, collection or contract watch` });
  if (rule.enrich.length > 0) issues.push({ path: ["rules", index, "enrich"], message: `rule "${rule.name}" alerts on records that did not arrive (expect): there is nothing to enrich` });
  if (rule.summary !== undefined) issues.push({ path: ["rules", index, "summary"], message: `rule "${rule.name}" alerts on records that did not arrive (expect): its summary is kaiawatch's line, with the counts under record (docs/absence.md)` });
  return issues;
}

/**
 * What only other subsystems can check in a config: summary templates, enrichments, the keys
 * a kind of rule does not read, and each sink's own options (the rule conditions are checked
 * by the config's compile, compile-config.ts, which the loader runs). `validate`, `run` and
 * `once` run the same list, so a config that validates is a config that starts.
 */
export const CONFIG_CHECKS: ConfigCheck[] = [
  (config) => checkEnrichments(config),
  (config) => config.rules.flatMap((rule, index) => absenceRuleIssues(rule, index)),
  (config) =>
    config.rules.flatMap((rule, index): ConfigIssue[] =>
      rule.summary === undefined || rule.expect !== undefined
        ? []
        : validateSummaryTemplate(rule.summary, rule.source, isTokenRule(config, rule) ? TOKEN_TRANSFER_TEMPLATE_VARIABLES : []).map((issue) => ({ path: ["rules", index, "summary", ...issue.path], message: issue.message })),
    ),
  // Accepted by the schema for every rule, read only by balance rules: refused elsewhere
  // rather than silently ignored (`enrich` on a balance rule is refused by checkEnrichments).
  (config) =>
    config.rules.flatMap((rule, index): ConfigIssue[] =>
      rule.source === "balances" || rule.clear_after === undefined
        ? []
        : [{ path: ["rules", index, "clear_after"], message: rule.expect === undefined ? `rule "${rule.name}" alerts once per record: clear_after applies to balance rules only` : `rule "${rule.name}" is an absence rule, resolved by the window that holds enough records again: clear_after applies to balance rules only` }],
    ),
  // A record's alert has no episode to remind of.
  (config) =>
    config.rules.flatMap((rule, index): ConfigIssue[] =>
      rule.source === "balances" || rule.repeat_interval === undefined
        ? []
        : [
            {
              path: ["rules", index, "repeat_interval"],
              message:
                rule.expect === undefined
                  ? `rule "${rule.name}" alerts once per record, which has no episode to remind of: repeat_interval applies to balance rules (and operational.repeat_interval to kaiawatch's own conditions)`
                  : `rule "${rule.name}" is an absence rule: its episodes are not reminded of yet; repeat_interval applies to balance rules (and operational.repeat_interval to kaiawatch's own conditions)`,
            },
          ],
    ),
  // cooldown_key and group.by read the stored record as received; a token transfer's from,
  // to, direction and amount are decoded from its topics and data, not fields of it, so they
  // would read as "" and put every alert under one key. Refused, with the path that works.
  (config) =>
    config.rules.flatMap((rule, index): ConfigIssue[] => {
      if (!isTokenRule(config, rule)) return [];
      const keys: Array<[path: Array<string | number>, value: string | undefined]> = [
        [["rules", index, "cooldown_key"], rule.cooldown_key],
        [["rules", index, "group", "by"], rule.group?.by],
      ];
      return keys.flatMap(([path, value]): ConfigIssue[] => {
        if (value === undefined || !Object.hasOwn(DECODED_TOKEN_FIELDS, value)) return [];
        return [{ path, message: `rule "${rule.name}": ${value} of a token transfer is decoded from the log, not a field of its record; ${DECODED_TOKEN_FIELDS[value]}` }];
      });
    }),
  (config) =>
    Object.entries(config.sinks).flatMap(([name, sink]): ConfigIssue[] =>
      validateSinkConfig(sink).map((problem) => ({ path: ["sinks", name, ...problem.key.split(".").filter(Boolean)], message: problem.message })),
    ),
];
