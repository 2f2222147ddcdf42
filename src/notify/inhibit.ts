import type { Labels } from "./labels.js";
import { matches, parseMatcherList, type Matcher } from "./matchers.js";

/** An inhibit rule as the config writes it (Alertmanager's `inhibit_rules:` entry). */
export interface InhibitRuleSpec {
  source_matchers: readonly string[];
  target_matchers: readonly string[];
  /** Labels whose values must be the same on the source and the target. Default: none. */
  equal?: readonly string[];
}

/** An inhibit rule with its matchers parsed. */
export interface InhibitRule {
  /** Its key path in the config (`inhibit_rules[0]`): its name in explain, /status and logs. */
  readonly id: string;
  readonly sourceMatchers: readonly Matcher[];
  readonly targetMatchers: readonly Matcher[];
  readonly equal: readonly string[];
}

/** An alert firing now that may inhibit others: a balance episode or a kaiawatch condition not yet resolved. */
export interface FiringSource {
  /** Its episode's id (the firing alert's id). */
  id: string;
  labels: Labels;
  /** What it is, in words (an episode's summary), for explain and /status. */
  summary?: string;
}

/** What holds an alert back: the rule and the firing source it matched. */
export interface Inhibition {
  rule: InhibitRule;
  source: FiringSource;
}

/** The config's inhibit rules, parsed (the config checks have proven the matchers: a throw is a wiring mistake). */
export function buildInhibitRules(specs: readonly InhibitRuleSpec[]): InhibitRule[] {
  return specs.map((spec, index) => ({
    id: `inhibit_rules[${index}]`,
    sourceMatchers: parseMatcherList(spec.source_matchers),
    targetMatchers: parseMatcherList(spec.target_matchers),
    equal: [...(spec.equal ?? [])],
  }));
}

/**
 * The inhibition that holds back an alert with these labels, or undefined, as Alertmanager
 * decides it: a rule whose target matchers all match the alert, and a firing source whose
 * labels match the rule's source matchers and carry the same value of every `equal` label
 * (a label missing on both sides counts as equal, as Alertmanager's empty value does).
 *
 * Two of Alertmanager's guards: an alert never inhibits itself (its own episode, `selfId`),
 * and an alert that matches both sides of a rule is not held by a source that does too, so
 * two `critical` alerts of one wallet do not mute each other.
 */
export function inhibitionOf(rules: readonly InhibitRule[], sources: readonly FiringSource[], target: Labels, selfId?: string): Inhibition | undefined {
  for (const rule of rules) {
    if (!matches(rule.targetMatchers, target)) continue;
    const targetIsSource = matches(rule.sourceMatchers, target);
    for (const source of sources) {
      if (source.id === selfId) continue;
      if (!matches(rule.sourceMatchers, source.labels)) continue;
      if (targetIsSource && matches(rule.targetMatchers, source.labels)) continue;
      if (rule.equal.every((name) => (source.labels[name] ?? "") === (target[name] ?? ""))) return { rule, source };
    }
  }
  return undefined;
}

/** The sources some rule's source side matches: the inhibitions in force (for /status). */
export function activeInhibitions(rules: readonly InhibitRule[], sources: readonly FiringSource[]): Array<{ rule: string; source: FiringSource }> {
  return rules.flatMap((rule) => sources.filter((source) => matches(rule.sourceMatchers, source.labels)).map((source) => ({ rule: rule.id, source })));
}

/** `source_matchers […] target_matchers […] equal […]`: a rule in one line, for explain. */
export function describeInhibitRule(rule: InhibitRule): string {
  const list = (items: readonly { toString(): string }[] | readonly string[]) => `[${items.map(String).join(", ")}]`;
  return `${rule.id}: source_matchers ${list(rule.sourceMatchers)} target_matchers ${list(rule.targetMatchers)}${rule.equal.length > 0 ? ` equal ${list(rule.equal)}` : ""}`;
}
