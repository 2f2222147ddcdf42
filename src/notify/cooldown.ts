import type { RuleLookup } from "./rule-lookup.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import type { CooldownStamp, Store, SuppressedNote, SuppressionReason } from "../store/types.js";
import { readRecordField } from "./grouping.js";

export type { SuppressedNote, SuppressionReason };

/** What admission needs of a rule to find an alert's cooldown key. */
export interface CooldownRule {
  name: string;
  cooldownMs?: number;
  /** A field of the alert's record (read like `group.by`); the whole rule when absent. */
  cooldownKey?: string;
}

/** What admission reads of the sink's cooldown stamps; it never changes them (the dispatcher writes the stamps it starts). */
export interface CooldownView {
  /**
   * True when an alert of this sink, rule and key was let through less than `cooldownMs`
   * ago by another entry than `entryId` (an entry let through before a crash, and not sent
   * yet, is not held back by its own stamp).
   */
  isActive(sink: string, rule: string, key: string, cooldownMs: number, now: number, entryId: string): boolean;
}

/** The cooldown key of an entry under its rule: the value of the rule's `cooldown_key` field, or "" for the whole rule. */
export function cooldownKeyOf(rule: CooldownRule, entry: OutboxEntry): string {
  return rule.cooldownKey === undefined ? "" : readRecordField(entry.alert.record, rule.cooldownKey);
}

/**
 * Reads, for one pass of a sink, the stamps of the cooldown keys its due entries may need:
 * from the store at every pass, because with replicas another one may have delivered this
 * sink a moment ago (the sink's lease moved) and its stamps are in the store, not here.
 * Costs one read of at most one row per distinct key of the batch; nothing when no entry
 * of the batch is up for a cooldown decision.
 */
export async function readCooldownView(store: Store, sink: string, due: readonly OutboxEntry[], rules: RuleLookup<CooldownRule>): Promise<CooldownView> {
  const wanted = new Map<string, { rule: string; key: string }>();
  for (const entry of due) {
    if (entry.attempts !== 0 || entry.group_id !== undefined) continue;
    const rule = rules.get(entry.rule);
    if (rule?.cooldownMs === undefined || rule.cooldownMs <= 0) continue;
    const key = cooldownKeyOf(rule, entry);
    wanted.set(JSON.stringify([rule.name, key]), { rule: rule.name, key });
  }
  const stamps = new Map<string, CooldownStamp>();
  if (wanted.size > 0) for (const stamp of await store.readCooldowns(sink, [...wanted.values()])) stamps.set(JSON.stringify([stamp.rule, stamp.key]), stamp);
  return {
    isActive(_sink, rule, key, cooldownMs, now, entryId) {
      const stamp = stamps.get(JSON.stringify([rule, key]));
      return stamp !== undefined && stamp.entryId !== entryId && now - stamp.at < cooldownMs;
    },
  };
}

/** Entry id → when and why it was suppressed (cooldown or silence), for `kaiawatch outbox` and the status page. */
export async function readSuppressedNotes(store: Store, entries: ReadonlyArray<Pick<OutboxEntry, "id" | "state">>): Promise<Record<string, SuppressedNote>> {
  // Only a delivered entry can have been suppressed (the store keeps it as delivered, never sent).
  return store.suppressions(entries.filter((entry) => entry.state === "delivered").map((entry) => entry.id));
}
