import type { OutboxEntry } from "../model/outbox-entry.js";
import { cooldownKeyOf, type CooldownView, type SuppressionReason } from "./cooldown.js";
import { extreme } from "./extreme.js";
import { closeGroups, readRecordField, type ClosedGroup, type GroupPolicy } from "./grouping.js";
import { isActive, silenceMatches, type Silence } from "./silences.js";
import { routeGroupOf, type GroupFlushes } from "./route-grouping.js";
import { ROUTE_DIGEST_MAX, type Route } from "./routes.js";

export interface DispatcherRule {
  name: string;
  group?: GroupPolicy;
  /** Repeats of the rule (and cooldown key) within this period are suppressed. */
  cooldownMs?: number;
  /** A field of the alert's record (read like `group.by`); the whole rule when absent. */
  cooldownKey?: string;
  /** The rule has no `notify:`: the routes tree sent its alerts, and groups them unless `group` is set. */
  routed?: boolean;
}

/** One send: a single alert, or a digest sent whole. */
export interface PlannedDelivery {
  /** The Delivery id: the alert id for one alert, the group id for a digest. */
  id: string;
  rule: string;
  entries: OutboxEntry[];
}

export type { CooldownView };

export interface AdmissionInput {
  sink: string;
  /** The sink's due pending entries, oldest first, with every member of their digests (see `readDueEntries`). */
  due: readonly OutboxEntry[];
  /** Entries being sent right now: neither held nor planned again. */
  inFlight: ReadonlySet<string>;
  rules: ReadonlyMap<string, DispatcherRule>;
  /** The silences in force (`kaiawatch silence`). */
  silences: readonly Silence[];
  cooldown: CooldownView;
  /** The `routes:` tree: it groups the alerts it sent (see routeGroupOf). */
  routes?: Route;
  /** When each route group last sent this sink a digest (readGroupFlushes). */
  groupFlushes?: GroupFlushes;
  /** Close every open digest now instead of at the end of its window (`drain`). */
  flushGroups: boolean;
  now: number;
}

export interface HeldEntry {
  entry: OutboxEntry;
  reason: SuppressionReason;
  /** The silence that held it, when `reason` is "silence". */
  silenceId?: string;
}

export interface ClosedDigest {
  group: ClosedGroup;
  /** Its first alert's rule (a route's digest may gather several rules' alerts). */
  rule: string;
  /** The stamps its sending starts: its rules' cooldown keys, and a route group's last digest (group_interval). */
  stamps: Array<{ rule: string; key: string }>;
}

export interface Admission {
  /** Entries that are not sent at all: a silence or a running cooldown holds them back. */
  held: HeldEntry[];
  /** Single alerts let through by a cooldown: each starts its key's cooldown now (and, sent alone by a route's group, that group's interval). */
  cooldownStarts: Array<{ rule: string; key: string; entryId: string }>;
  /** Digests this pass closed: their group id must be durable before their first send. */
  closedDigests: ClosedDigest[];
  /** What to send, in outbox order (by each delivery's first entry). */
  sends: PlannedDelivery[];
  /** When something of `due` not sent now becomes ready (a backoff ending, a digest's window closing). */
  nextAt: number | undefined;
}

/**
 * The first stage of delivery, as Alertmanager's notify pipeline has it: which due entries
 * are held back (silence, cooldown), which are gathered into which digest, and what is sent.
 * Pure: it reads only its input, so a test drives it with plain data and the dispatcher
 * (or, later, a replica that claimed these entries) applies its answer to the store.
 *
 * Silences and cooldowns decide once per alert, before its first attempt: a retry is never
 * held back, and an entry let through before a crash (and not sent) is not held by its own
 * stamp (see CooldownView).
 */
export function admit(input: AdmissionInput): Admission {
  const { sink, now, cooldown } = input;
  let nextAt: number | undefined;
  const soonest = (time: number) => {
    nextAt = nextAt === undefined ? time : Math.min(nextAt, time);
  };
  const order = new Map(input.due.map((entry, index) => [entry.id, index]));
  const digests = new Map<string, OutboxEntry[]>();
  const singles: OutboxEntry[] = [];
  const buckets = new Map<string, { policy: GroupPolicy; stamp?: { rule: string; key: string }; entries: OutboxEntry[] }>();
  const held: HeldEntry[] = [];
  const cooldownStarts: Admission["cooldownStarts"] = [];
  // Cooldowns started by this pass: a second alert of the same key in the same batch is held by the first.
  const startedNow = new Set<string>();

  for (const entry of input.due) {
    if (input.inFlight.has(entry.id)) continue;
    if (entry.group_id !== undefined) {
      // Already part of a persisted digest: it is sent as that digest, whatever the config says now.
      const members = digests.get(entry.group_id) ?? [];
      members.push(entry);
      digests.set(entry.group_id, members);
      continue;
    }
    const dueAt = Date.parse(entry.next_attempt_at);
    if (dueAt > now) {
      soonest(dueAt);
      continue;
    }
    const rule = input.rules.get(entry.rule);
    const firstDecision = entry.attempts === 0;
    if (firstDecision) {
      const silence = input.silences.find((s) => isActive(s, now) && silenceMatches(s, entry.rule, entry.alert));
      if (silence !== undefined) {
        held.push({ entry, reason: "silence", silenceId: silence.id });
        continue;
      }
    }
    // A route's group is joined once, before the first attempt: an alert its group sent alone
    // and that failed is retried alone, not held for the group's next interval.
    const routeGroup = firstDecision ? routeGroupOf(input.routes, rule, entry, sink) : undefined;
    // A resolved alert is the end of an incident its sink was told about, not a repeat: a
    // cooldown (started by the firing alert) must not hold it, or the incident stays open.
    if (firstDecision && rule?.cooldownMs !== undefined && rule.cooldownMs > 0 && entry.alert.status !== "resolved") {
      const key = cooldownKeyOf(rule, entry);
      const stamp = `${rule.name}\u0000${key}`;
      if (startedNow.has(stamp) || cooldown.isActive(sink, rule.name, key, rule.cooldownMs, now, entry.id)) {
        held.push({ entry, reason: "cooldown" });
        continue;
      }
      // A digest starts its cooldown when it closes (below), not per member.
      if (!rule.group && routeGroup === undefined) {
        startedNow.add(stamp);
        cooldownStarts.push({ rule: rule.name, key, entryId: entry.id });
      }
    }
    if (rule?.group) {
      const by = rule.group.by === undefined ? "" : readRecordField(entry.alert.record, rule.group.by);
      const bucketKey = `${rule.name}\u0000${by}`;
      const bucket = buckets.get(bucketKey) ?? { policy: rule.group, entries: [] };
      bucket.entries.push(entry);
      buckets.set(bucketKey, bucket);
    } else if (routeGroup !== undefined) {
      // Keyed apart from the rules' buckets: a route id has dots, a rule name never does.
      const bucketKey = `route\u0000${routeGroup.bucket}`;
      const { route } = routeGroup;
      // An alert sent alone and not recorded as sent (a crash in between) is not held by its own stamp.
      const flushed = input.groupFlushes?.get(routeGroup.bucket);
      const counts = flushed !== undefined && flushed.entryId !== entry.id;
      const policy: GroupPolicy = { windowMs: route.groupWaitMs, max: ROUTE_DIGEST_MAX, ...(counts ? { continueAt: flushed.at + route.groupIntervalMs } : {}) };
      const bucket = buckets.get(bucketKey) ?? { policy, stamp: routeGroup.stamp, entries: [] };
      bucket.entries.push(entry);
      buckets.set(bucketKey, bucket);
    } else {
      singles.push(entry);
    }
  }

  const closedDigests: ClosedDigest[] = [];
  for (const bucket of buckets.values()) {
    const { closed, readyAt } = closeGroups(bucket.entries, bucket.policy, now, input.flushGroups);
    if (readyAt !== undefined) soonest(readyAt);
    for (const group of closed) {
      const [only] = group.entries;
      if (bucket.stamp !== undefined && only !== undefined && group.entries.length === 1) {
        // A route's group of one alert is sent as that alert (its own id and message), not as a
        // digest of one; it still starts its cooldown and its group's interval.
        singles.push(only);
        const rule = input.rules.get(only.rule);
        if (rule?.cooldownMs !== undefined && rule.cooldownMs > 0 && only.alert.status !== "resolved") cooldownStarts.push({ rule: rule.name, key: cooldownKeyOf(rule, only), entryId: only.id });
        cooldownStarts.push({ ...bucket.stamp, entryId: only.id });
        continue;
      }
      digests.set(group.id, group.entries);
      const stamps = new Map<string, { rule: string; key: string }>();
      for (const entry of group.entries) {
        const rule = input.rules.get(entry.rule);
        if (rule?.cooldownMs === undefined || rule.cooldownMs <= 0) continue;
        const key = cooldownKeyOf(rule, entry);
        stamps.set(JSON.stringify([rule.name, key]), { rule: rule.name, key });
      }
      if (bucket.stamp !== undefined) stamps.set(JSON.stringify([bucket.stamp.rule, bucket.stamp.key]), bucket.stamp);
      closedDigests.push({ group, rule: group.entries[0]?.rule ?? "", stamps: [...stamps.values()] });
    }
  }

  const planned: Array<PlannedDelivery & { index: number }> = [];
  for (const [id, members] of digests) {
    // A digest goes when its last member's backoff has ended: it is sent whole.
    const dueAt = extreme(members, (entry) => Date.parse(entry.next_attempt_at), Math.max);
    if (dueAt > now) {
      soonest(dueAt);
      continue;
    }
    const first = members[0];
    if (first) planned.push({ id, rule: first.rule, entries: members, index: order.get(first.id) ?? 0 });
  }
  for (const entry of singles) planned.push({ id: entry.alert.id, rule: entry.rule, entries: [entry], index: order.get(entry.id) ?? 0 });
  planned.sort((a, b) => a.index - b.index);
  const sends = planned.map(({ id, rule, entries }) => ({ id, rule, entries }));

  return { held, cooldownStarts, closedDigests, sends, nextAt };
}
