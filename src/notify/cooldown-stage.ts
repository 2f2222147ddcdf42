import type { OutboxEntry } from "../model/outbox-entry.js";
import { cooldownKeyOf, type CooldownRule, type CooldownView } from "./cooldown.js";

/** A cooldown a single alert let through starts (and, sent alone by a route's group, that group's interval). */
export interface CooldownStart {
  rule: string;
  key: string;
  entryId: string;
}

/** Admission's cooldown stage for one pass of a sink: it remembers the cooldowns this pass starts. */
export interface CooldownStage {
  /**
   * True when a running cooldown of the entry's rule and key holds it back. An entry that is
   * let through and sent alone starts its cooldown now (`alone`); a digest's members start
   * theirs when the digest closes (the digest stage).
   */
  holds(rule: CooldownRule | undefined, entry: OutboxEntry, alone: boolean, now: number): boolean;
  /** The cooldowns the entries let through alone have started, in order. */
  readonly starts: CooldownStart[];
}

/**
 * A rule's `cooldown:` on one sink, decided once per alert before its first attempt. A
 * resolved alert is the end of an incident its sink was told about, not a repeat: a cooldown
 * (started by the firing alert) never holds it, or the incident stays open. A second alert of
 * the same key in the same pass is held by the first.
 */
export function cooldownStage(sink: string, view: CooldownView): CooldownStage {
  const startedNow = new Set<string>();
  const starts: CooldownStart[] = [];
  return {
    starts,
    holds(rule, entry, alone, now) {
      if (entry.attempts !== 0 || rule?.cooldownMs === undefined || rule.cooldownMs <= 0 || entry.alert.status === "resolved") return false;
      const key = cooldownKeyOf(rule, entry);
      const stamp = `${rule.name}\u0000${key}`;
      if (startedNow.has(stamp) || view.isActive(sink, rule.name, key, rule.cooldownMs, now, entry.id)) return true;
      if (alone) {
        startedNow.add(stamp);
        starts.push({ rule: rule.name, key, entryId: entry.id });
      }
      return false;
    },
  };
}
