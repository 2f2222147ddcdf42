import type { RuleLookup } from "./rule-lookup.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import type { Store } from "../store/types.js";
import { formatLabels, labelsOfAlert } from "./labels.js";
import { groupLabels, routeToSink, type Route } from "./routes.js";

/** What admission needs of a rule to know whether the routes tree groups its alerts. */
export interface RoutedRule {
  /** True when the rule has no `notify:` and the tree sent its alerts. */
  routed?: boolean;
  /** The rule's own `group:`: it wins over the route's grouping. */
  group?: unknown;
}

/** The group an entry joins on its route, for one sink. */
export interface RouteGroup {
  route: Route;
  /** Admission's bucket: the route and the values of its group_by labels. */
  bucket: string;
  /** The stamp of the group's last digest (the store's cooldown stamps, under a rule name no rule can have). */
  stamp: { rule: string; key: string };
}

/** Stamps of route groups carry this before the route's id; rule names are slugs, so none starts with it. */
const ROUTE_STAMP_PREFIX = "route:";

/**
 * The route group of an entry on this sink, when the tree grouped it there: its rule has no
 * `notify:` (or it is not a rule's: kaiawatch's operational alerts) and no `group:` of its
 * own, and one of the routes its labels end at sends to the sink. Undefined otherwise: the
 * rule's own grouping, or none, applies.
 */
export function routeGroupOf(routes: Route | undefined, rule: RoutedRule | undefined, entry: OutboxEntry, sink: string): RouteGroup | undefined {
  if (routes === undefined) return undefined;
  if (rule !== undefined && (rule.routed !== true || rule.group !== undefined)) return undefined;
  const labels = labelsOfAlert(entry.alert);
  const route = routeToSink(routes, labels, sink);
  if (route === undefined) return undefined;
  const key = formatLabels(groupLabels(route, labels));
  return { route, bucket: `${route.id}\u0000${key}`, stamp: { rule: `${ROUTE_STAMP_PREFIX}${route.id}`, key } };
}

/** When each route group of a pass last sent this sink a digest (or an alert alone), by bucket, and the alert when alone. */
export type GroupFlushes = ReadonlyMap<string, { at: number; entryId?: string }>;

/**
 * Reads, for one pass of a sink, when the route groups of its due entries last sent a digest
 * (group_interval counts from there). From the store, at every pass, like the cooldowns:
 * another replica may have delivered this sink a moment ago. Nothing is read when no entry
 * is grouped by a route.
 */
export async function readGroupFlushes(store: Store, sink: string, due: readonly OutboxEntry[], rules: RuleLookup<RoutedRule>, routes: Route | undefined): Promise<GroupFlushes> {
  if (routes === undefined) return new Map();
  const wanted = new Map<string, { rule: string; key: string }>();
  for (const entry of due) {
    if (entry.group_id !== undefined) continue;
    const group = routeGroupOf(routes, rules.get(entry.rule), entry, sink);
    if (group !== undefined) wanted.set(group.bucket, group.stamp);
  }
  const flushes = new Map<string, { at: number; entryId?: string }>();
  if (wanted.size === 0) return flushes;
  const byStamp = new Map([...wanted].map(([bucket, stamp]) => [JSON.stringify([stamp.rule, stamp.key]), bucket]));
  for (const stamp of await store.readCooldowns(sink, [...wanted.values()])) {
    const bucket = byStamp.get(JSON.stringify([stamp.rule, stamp.key]));
    if (bucket !== undefined) flushes.set(bucket, { at: stamp.at, ...(stamp.entryId === undefined ? {} : { entryId: stamp.entryId }) });
  }
  return flushes;
}
