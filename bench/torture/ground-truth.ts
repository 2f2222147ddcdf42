import { alertId } from "../../src/rules/build-alert.js";
import { OPERATIONAL_ALERT_SOURCE } from "../../src/model/alert-document.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import type { Received } from "./receivers.js";

/** What a rule had to alert on: the identity key and block of every matching record up to its source's final cursor. */
export interface ExpectedRule {
  rule: string;
  sinks: string[];
  records: Map<string, number>;
}

export interface SinkVerdict {
  /** Alerts the receiver took (a digest counts each alert it holds). */
  received: number;
  /** Distinct (rule, record) pairs among them. */
  distinct: number;
  /** Deliveries the sink should have got: one per record of each rule that notifies it. */
  expected: number;
  /** Expected but never received. */
  lost: number;
  /** Received again under the same alert id and delivery id: allowed (at-least-once, exactly-once per id). */
  duplicatesSameId: number;
  /** Received again under another id: a receiver could not drop it. Must be 0. */
  duplicatesNewId: number;
  /** Received but matching no expected record (outside the range, a wrong rule, an unknown id). Must be 0. */
  unexpected: number;
}

export interface Verdict {
  sinks: Record<string, SinkVerdict>;
  lost: number;
  /** Blocks at or below a source's final cursor missing at least one record at some sink of its rule: (rule, sink, block) triples. */
  gaps: number;
  duplicatesSameId: number;
  duplicatesNewId: number;
  unexpected: number;
  /** A few of the lost and unexpected, to start debugging from. */
  examples: string[];
}

/**
 * Compares what each receiver got with the simulator's ground truth: lost 0 and gaps 0 mean
 * every record of every block up to the final cursor reached every sink of its rule; a
 * record received twice must carry the same ids both times.
 */
export function judge(expected: ExpectedRule[], receivedBySink: Record<string, Received[]>): Verdict {
  const verdict: Verdict = { sinks: {}, lost: 0, gaps: 0, duplicatesSameId: 0, duplicatesNewId: 0, unexpected: 0, examples: [] };
  const example = (text: string) => {
    if (verdict.examples.length < 20) verdict.examples.push(text);
  };
  // Email carries only the alert id: map every expected id back to its rule and record.
  const byAlertId = new Map<string, { rule: string; key: string }>();
  for (const { rule, records } of expected) for (const key of records.keys()) byAlertId.set(alertId(rule, key), { rule, key });

  for (const [sink, received] of Object.entries(receivedBySink)) {
    const rules = expected.filter((e) => e.sinks.includes(sink));
    const groups = new Map<string, { count: number; ids: Set<string> }>();
    let unexpected = 0;
    for (const item of received) {
      let rule: string;
      let key: string;
      if (item.alert) {
        rule = item.alert.rule;
        // The torture config has no operational sinks: such an alert here is a bug, said plainly.
        if (item.alert.source === OPERATIONAL_ALERT_SOURCE || item.alert.source === "balances") throw new Error(`${sink}: unexpected operational alert ${item.alert.id}`);
        key = NORMALIZERS[item.alert.source](item.alert.record as never).key;
      } else {
        const known = byAlertId.get(item.alertId);
        if (!known) {
          unexpected += 1;
          example(`${sink}: unknown alert id ${item.alertId}`);
          continue;
        }
        ({ rule, key } = known);
      }
      const ruleExpected = rules.find((e) => e.rule === rule);
      if (!ruleExpected?.records.has(key) || item.alertId !== alertId(rule, key)) {
        unexpected += 1;
        example(`${sink}: unexpected ${rule} ${key} (alert id ${item.alertId})`);
        continue;
      }
      const group = groups.get(`${rule}|${key}`) ?? { count: 0, ids: new Set<string>() };
      group.count += 1;
      group.ids.add(`${item.alertId}/${item.deliveryId}`);
      groups.set(`${rule}|${key}`, group);
    }
    let lost = 0;
    let expectedCount = 0;
    const gapBlocks = new Set<string>();
    for (const { rule, records } of rules) {
      for (const [key, block] of records) {
        expectedCount += 1;
        if (groups.has(`${rule}|${key}`)) continue;
        lost += 1;
        gapBlocks.add(`${rule}|${block}`);
        example(`${sink}: lost ${rule} ${key}`);
      }
    }
    let duplicatesSameId = 0;
    let duplicatesNewId = 0;
    for (const { count, ids } of groups.values()) {
      if (ids.size === 1) duplicatesSameId += count - 1;
      else duplicatesNewId += count - 1;
    }
    verdict.sinks[sink] = { received: received.length, distinct: groups.size, expected: expectedCount, lost, duplicatesSameId, duplicatesNewId, unexpected };
    verdict.lost += lost;
    verdict.gaps += gapBlocks.size;
    verdict.duplicatesSameId += duplicatesSameId;
    verdict.duplicatesNewId += duplicatesNewId;
    verdict.unexpected += unexpected;
  }
  return verdict;
}
