import type { Enrichment } from "../model/enrichment.js";
import type { AlertDocument } from "../model/alert-document.js";
import type { ConditionNode } from "../rules/parse-condition.js";
import { createRuleIndex, type RuleIndex } from "../rules/rule-index.js";
import type { WatchedRecord } from "../model/record.js";
import type { AbsenceRule } from "./absence.js";

/** A rule as a source runs it: compiled once at start-up, then called per record. */
export interface SourceRule {
  name: string;
  watch: string;
  notify: readonly string[];
  /** Extra lookups for this rule's matches (rule `enrich:`); absent or empty: none. */
  enrich?: readonly Enrichment[];
  test(record: WatchedRecord): boolean;
  /** The parsed condition behind `test`, read by the rule index (see createRuleIndex). */
  condition?: ConditionNode;
  toAlert(record: WatchedRecord, now: Date): AlertDocument;
  /**
   * An absence rule (`expect`): its matches are counted, not sent; the poller decides its
   * alerts from what it counted (absence.ts).
   */
  absence?: AbsenceRule;
}

/**
 * A source rule's own fields read from what it is made of (a rule's config, or the rule it
 * narrows) when asked, not copied: a daemon keeps one per watch and rule for as long as it
 * runs (CompiledSourceRule, NarrowedRule).
 */
export abstract class RuleFieldsOf<R extends Pick<SourceRule, "name" | "watch" | "notify" | "enrich">> {
  constructor(protected readonly rule: R) {}

  get name(): string {
    return this.rule.name;
  }

  get watch(): string {
    return this.rule.watch;
  }

  get notify(): readonly string[] {
    return this.rule.notify;
  }

  get enrich(): SourceRule["enrich"] {
    return this.rule.enrich;
  }
}

export interface Match {
  rule: SourceRule;
  alert: AlertDocument;
  /** The record it matched (its identity key names it in a witness, see audit-plan.ts). */
  record: WatchedRecord;
}

/** A source's rules, indexed once (see createRuleIndex), asked record after record. */
export interface RuleMatcher {
  /** True when some rule matches the record. */
  some(record: WatchedRecord): boolean;
  /** Every (record, rule) match of a chunk, in chain order, then in the order of the rules. */
  match(records: readonly WatchedRecord[], now: Date): Match[];
}

export function createRuleMatcher(rules: readonly SourceRule[]): RuleMatcher {
  return new IndexedMatcher(createRuleIndex(rules));
}

// A class rather than closures: a daemon of 10,000 sources holds one per source.
class IndexedMatcher implements RuleMatcher {
  constructor(private readonly index: RuleIndex<SourceRule>) {}

  some(record: WatchedRecord): boolean {
    const candidates = this.index.candidates(record);
    for (let i = 0; i < candidates.length; i++) if ((candidates[i] as SourceRule).test(record)) return true;
    return false;
  }

  match(records: readonly WatchedRecord[], now: Date): Match[] {
    const matches: Match[] = [];
    for (const record of records) {
      for (const rule of this.index.candidates(record)) {
        if (rule.test(record)) matches.push({ rule, alert: rule.toAlert(record, now), record });
      }
    }
    return matches;
  }
}

/** Every (record, rule) match of a chunk, in chain order. */
export function matchRecords(records: readonly WatchedRecord[], rules: readonly SourceRule[], now: Date): Match[] {
  return createRuleMatcher(rules).match(records, now);
}
