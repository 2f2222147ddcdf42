import type { Enrichment } from "../config/types.js";
import type { AlertDocument } from "../rules/alert.js";
import type { WatchedRecord } from "./record.js";

/** A rule as a source runs it: compiled once at start-up, then called per record. */
export interface SourceRule {
  name: string;
  watch: string;
  notify: readonly string[];
  /** Extra lookups for this rule's matches (rule `enrich:`); absent or empty: none. */
  enrich?: readonly Enrichment[];
  test(record: WatchedRecord): boolean;
  toAlert(record: WatchedRecord, now: Date): AlertDocument;
}

export interface Match {
  rule: SourceRule;
  alert: AlertDocument;
}

/** Every (record, rule) match of a chunk, in chain order. */
export function matchRecords(records: readonly WatchedRecord[], rules: readonly SourceRule[], now: Date): Match[] {
  const matches: Match[] = [];
  for (const record of records) {
    for (const rule of rules) {
      if (rule.test(record)) matches.push({ rule, alert: rule.toAlert(record, now) });
    }
  }
  return matches;
}
