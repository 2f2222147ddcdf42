import type { RuleLookup } from "./rule-lookup.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import type { CooldownView, SuppressionReason } from "./cooldown.js";
import { cooldownStage, type CooldownStart } from "./cooldown-stage.js";
import { digestStage } from "./digest-stage.js";
import type { ClosedGroup, GroupPolicy } from "./grouping.js";
import type { FiringSource, InhibitRule } from "./inhibit.js";
import { inhibitMuter } from "./inhibit-muter.js";
import { muteStage, type Mute } from "./mute-stage.js";
import { routeGroupOf, type GroupFlushes } from "./route-grouping.js";
import type { Route } from "./routes.js";
import { planSends } from "./send-plan.js";
import { silenceMuter } from "./silence-muter.js";
import { mutedEpisodeEnds, timeIntervalMuter } from "./time-interval-muter.js";
import type { Silence } from "./silences.js";

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
  rules: RuleLookup<DispatcherRule>;
  /** The silences in force (`kaiawatch silence`). */
  silences: readonly Silence[];
  cooldown: CooldownView;
  /** The config's `inhibit_rules:` (docs/reminders-and-inhibition.md). */
  inhibitRules?: readonly InhibitRule[];
  /** The alerts firing now that may inhibit others (balance episodes, kaiawatch's conditions). */
  firing?: readonly FiringSource[];
  /** The `routes:` tree: it groups the alerts it sent (see routeGroupOf). */
  routes?: Route;
  /** When each route group last sent this sink a digest (readGroupFlushes). */
  groupFlushes?: GroupFlushes;
  /** Close every open digest now instead of at the end of its window (`drain`). */
  flushGroups: boolean;
  now: number;
}

/** An entry held back: by a muter (what it names beside the reason), or by a cooldown. */
export interface HeldEntry extends Omit<Mute, "reason"> {
  entry: OutboxEntry;
  reason: SuppressionReason;
}

/** An entry a muted route holds until its mute ends (an episode's alert): it stays pending, tried again `until`. */
export interface DeferredEntry extends HeldEntry {
  until: number;
}

export interface ClosedDigest {
  group: ClosedGroup;
  /** Its first alert's rule (a route's digest may gather several rules' alerts). */
  rule: string;
  /** The stamps its sending starts: its rules' cooldown keys, and a route group's last digest (group_interval). */
  stamps: Array<{ rule: string; key: string }>;
}

export interface Admission {
  /** Entries that are not sent at all: a silence, an inhibit rule, a muted route or a running cooldown holds them back. */
  held: HeldEntry[];
  /** Entries a muted route makes wait (an episode's alerts): not sent now, not dropped. */
  deferred: DeferredEntry[];
  /** Single alerts let through by a cooldown: each starts its key's cooldown now (and, sent alone by a route's group, that group's interval). */
  cooldownStarts: CooldownStart[];
  /** Digests this pass closed: their group id must be durable before their first send. */
  closedDigests: ClosedDigest[];
  /** What to send, in outbox order (by each delivery's first entry). */
  sends: PlannedDelivery[];
  /** When something of `due` not sent now becomes ready (a backoff ending, a digest's window closing). */
  nextAt: number | undefined;
}

/**
 * The first stage of delivery, as Alertmanager's notify pipeline has it, in stages: the mute
 * stage (silences, then inhibition, then the routes' time intervals: mute-stage.ts), the
 * route group an entry joins, the cooldown stage (cooldown-stage.ts), the digest stage
 * (digest-stage.ts) and the send plan (send-plan.ts). Pure: it reads only its input, so a test drives it with plain data and the
 * dispatcher (or a replica that claimed these entries) applies its answer to the store.
 *
 * Mutes and cooldowns decide once per alert, before its first attempt: a retry is never
 * held back, and an entry let through before a crash (and not sent) is not held by its own
 * stamp (see CooldownView).
 */
export function admit(input: AdmissionInput): Admission {
  const { sink, now } = input;
  let nextAt: number | undefined;
  const soonest = (time: number) => {
    nextAt = nextAt === undefined ? time : Math.min(nextAt, time);
  };
  const mute = muteStage([silenceMuter(input.silences), inhibitMuter(input.inhibitRules ?? [], input.firing ?? []), timeIntervalMuter(input.routes, input.rules)]);
  const cooldown = cooldownStage(sink, input.cooldown);
  const grouping = digestStage(input.rules, input.groupFlushes);
  const digests = new Map<string, OutboxEntry[]>();
  const singles: OutboxEntry[] = [];
  const held: HeldEntry[] = [];
  const deferred: DeferredEntry[] = [];
  // Episodes that began and ended while their route was muted: nobody hears of them.
  const endedMuted = mutedEpisodeEnds(input.due, input.routes, input.rules, now);

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
    const muted = mute(entry, now);
    if (muted?.until !== undefined) {
      const { until, ...reason } = muted;
      deferred.push({ entry, ...reason, until });
      soonest(until);
      continue;
    }
    if (muted !== undefined) {
      held.push({ entry, ...muted });
      continue;
    }
    const endedOn = endedMuted.get(entry.id);
    if (endedOn !== undefined) {
      held.push({ entry, reason: "muted", timeInterval: { route: endedOn, interval: "", why: "muted the episode until it resolved" } });
      continue;
    }
    const rule = input.rules.get(entry.rule);
    // A route's group is joined once, before the first attempt: an alert its group sent alone
    // and that failed is retried alone, not held for the group's next interval.
    const routeGroup = entry.attempts === 0 ? routeGroupOf(input.routes, rule, entry, sink) : undefined;
    if (cooldown.holds(rule, entry, !rule?.group && routeGroup === undefined, now)) {
      held.push({ entry, reason: "cooldown" });
      continue;
    }
    if (!grouping.join(entry, rule, routeGroup)) singles.push(entry);
  }

  const closed = grouping.close(now, input.flushGroups);
  if (closed.readyAt !== undefined) soonest(closed.readyAt);
  for (const { group } of closed.closedDigests) digests.set(group.id, group.entries);
  const sends = planSends(input.due, digests, [...singles, ...closed.singles], now, soonest);
  return { held, deferred, cooldownStarts: [...cooldown.starts, ...closed.cooldownStarts], closedDigests: closed.closedDigests, sends, nextAt };
}
