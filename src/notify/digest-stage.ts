import type { RuleLookup } from "./rule-lookup.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import type { ClosedDigest, DispatcherRule } from "./admission.js";
import { cooldownKeyOf } from "./cooldown.js";
import type { CooldownStart } from "./cooldown-stage.js";
import { closeGroups, readRecordField, type GroupPolicy } from "./grouping.js";
import type { GroupFlushes, RouteGroup } from "./route-grouping.js";
import { ROUTE_DIGEST_MAX } from "./routes.js";

/** What the digest stage made of a pass's grouped entries. */
export interface ClosedBuckets {
  closedDigests: ClosedDigest[];
  /** Route groups of one alert: sent as that alert. */
  singles: OutboxEntry[];
  /** The cooldowns (and route group intervals) those singles start. */
  cooldownStarts: CooldownStart[];
  /** When the soonest open digest's window closes. */
  readyAt: number | undefined;
}

/** Admission's digest stage for one pass of a sink: entries join their rule's or route's group, then the groups due close. */
export interface DigestStage {
  /** Whether the entry joins a digest (its rule's `group:`, or its route's group); false: it goes alone. */
  join(entry: OutboxEntry, rule: DispatcherRule | undefined, routeGroup: RouteGroup | undefined): boolean;
  close(now: number, flushGroups: boolean): ClosedBuckets;
}

interface Bucket {
  policy: GroupPolicy;
  stamp?: { rule: string; key: string };
  entries: OutboxEntry[];
}

/**
 * Gathers entries into digests: a rule's `group:` (per value of its `by` field) wins over the
 * route's group (per value of its group_by labels), whose first digest waits group_wait and
 * whose next ones wait group_interval after the last (groupFlushes, from the store).
 */
export function digestStage(rules: RuleLookup<DispatcherRule>, groupFlushes: GroupFlushes | undefined): DigestStage {
  const buckets = new Map<string, Bucket>();
  const add = (key: string, make: () => Omit<Bucket, "entries">, entry: OutboxEntry) => {
    const bucket = buckets.get(key) ?? { ...make(), entries: [] };
    bucket.entries.push(entry);
    buckets.set(key, bucket);
  };
  return {
    join(entry, rule, routeGroup) {
      if (rule?.group) {
        const { group } = rule;
        const by = group.by === undefined ? "" : readRecordField(entry.alert.record, group.by);
        add(`${rule.name}\u0000${by}`, () => ({ policy: group }), entry);
        return true;
      }
      if (routeGroup === undefined) return false;
      const { route } = routeGroup;
      // An alert sent alone and not recorded as sent (a crash in between) is not held by its own stamp.
      const flushed = groupFlushes?.get(routeGroup.bucket);
      const counts = flushed !== undefined && flushed.entryId !== entry.id;
      const policy: GroupPolicy = { windowMs: route.groupWaitMs, max: ROUTE_DIGEST_MAX, ...(counts ? { continueAt: flushed.at + route.groupIntervalMs } : {}) };
      // Keyed apart from the rules' buckets: a route id has dots, a rule name never does.
      add(`route\u0000${routeGroup.bucket}`, () => ({ policy, stamp: routeGroup.stamp }), entry);
      return true;
    },
    close(now, flushGroups) {
      const result: ClosedBuckets = { closedDigests: [], singles: [], cooldownStarts: [], readyAt: undefined };
      for (const bucket of buckets.values()) {
        const { closed, readyAt } = closeGroups(bucket.entries, bucket.policy, now, flushGroups);
        if (readyAt !== undefined) result.readyAt = result.readyAt === undefined ? readyAt : Math.min(result.readyAt, readyAt);
        for (const group of closed) {
          const [only] = group.entries;
          if (bucket.stamp !== undefined && only !== undefined && group.entries.length === 1) {
            // A route's group of one alert is sent as that alert (its own id and message), not as a
            // digest of one; it still starts its cooldown and its group's interval.
            result.singles.push(only);
            const rule = rules.get(only.rule);
            if (rule?.cooldownMs !== undefined && rule.cooldownMs > 0 && only.alert.status !== "resolved") result.cooldownStarts.push({ rule: rule.name, key: cooldownKeyOf(rule, only), entryId: only.id });
            result.cooldownStarts.push({ ...bucket.stamp, entryId: only.id });
            continue;
          }
          const stamps = new Map<string, { rule: string; key: string }>();
          for (const entry of group.entries) {
            const rule = rules.get(entry.rule);
            if (rule?.cooldownMs === undefined || rule.cooldownMs <= 0) continue;
            const key = cooldownKeyOf(rule, entry);
            stamps.set(JSON.stringify([rule.name, key]), { rule: rule.name, key });
          }
          if (bucket.stamp !== undefined) stamps.set(JSON.stringify([bucket.stamp.rule, bucket.stamp.key]), bucket.stamp);
          result.closedDigests.push({ group, rule: group.entries[0]?.rule ?? "", stamps: [...stamps.values()] });
        }
      }
      return result;
    },
  };
}
