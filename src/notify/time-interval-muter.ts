import type { RuleLookup } from "./rule-lookup.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import { labelsOfAlert } from "./labels.js";
import type { Muter } from "./mute-stage.js";
import type { RoutedRule } from "./route-grouping.js";
import { UNMUTE_HORIZON_MS, describeRouteMute, routeMuteAt, routeToSink, routeUnmutedAt, type Route } from "./routes.js";

/**
 * Time intervals as a muter: an alert the tree sent to its sink is held while the route that
 * sent it there is muted (in one of its mute_time_intervals, or outside its
 * active_time_intervals), as Alertmanager's time mute stages hold a route's notifications.
 * The alert still ends at that route: a muted route does not pass it to a sibling. Alerts of a
 * rule with `notify:` go past the tree and are not muted by it.
 *
 * Most alerts are dropped (recorded) as inhibited ones are. An episode's alerts (a firing
 * balance or operational episode, and its resolve) wait for the end of the mute instead
 * (`until`): a receiver hears then of an episode still firing, and of its end; one that began
 * and ended inside the mute is dropped at its end (admission, see mutedEpisodeEnds).
 */
export function timeIntervalMuter(routes: Route | undefined, rules: RuleLookup<RoutedRule>): Muter {
  return {
    mutes(entry, now) {
      if (routes === undefined) return undefined;
      const rule = rules.get(entry.rule);
      if (rule !== undefined && rule.routed !== true) return undefined;
      const route = routeToSink(routes, labelsOfAlert(entry.alert), entry.sink);
      const mute = route === undefined ? undefined : routeMuteAt(route, now);
      if (route === undefined || mute === undefined) return undefined;
      const muted = { reason: "muted" as const, timeInterval: { route: route.id, interval: mute.interval, why: `is ${describeRouteMute(mute)}` } };
      if (entry.alert.episode_id === undefined) return muted;
      return { ...muted, until: routeUnmutedAt(route, now) ?? now + UNMUTE_HORIZON_MS };
    },
  };
}

/** How a deferred entry's note (its last_error, shown by `kaiawatch outbox`) begins. */
export const MUTED_UNTIL = "muted until ";

/**
 * The entries of episodes that began and ended while their route muted them: a resolve due
 * together with the episode's first firing alert, neither ever attempted, one of them made to
 * wait by a mute (its note). Both are dropped (recorded as muted): the receiver never heard of
 * the episode. A waiting reminder beside a resolve is dropped alone: the resolve goes, to close
 * the incident its first alert opened before the mute.
 */
export function mutedEpisodeEnds(due: readonly OutboxEntry[], routes: Route | undefined, rules: RuleLookup<RoutedRule>, now: number): Map<string, string> {
  const dropped = new Map<string, string>();
  if (routes === undefined) return dropped;
  const byEpisode = new Map<string, OutboxEntry[]>();
  for (const entry of due) {
    const episode = entry.alert.episode_id;
    // Only what is due now: a firing alert still waiting for the mute's end pairs with its resolve when both are due.
    if (episode === undefined || entry.attempts !== 0 || entry.group_id !== undefined || Date.parse(entry.next_attempt_at) > now) continue;
    const list = byEpisode.get(episode) ?? [];
    list.push(entry);
    byEpisode.set(episode, list);
  }
  for (const [episode, entries] of byEpisode) {
    const resolve = entries.find((entry) => entry.alert.status === "resolved");
    const route = resolve === undefined ? undefined : routeWithIntervals(resolve, routes, rules);
    if (resolve === undefined || route === undefined) continue;
    const waited = (entry: OutboxEntry) => entry.last_error?.startsWith(MUTED_UNTIL) === true;
    const firing = entries.filter((entry) => entry.alert.status !== "resolved" && (waited(entry) || waited(resolve)));
    for (const entry of firing) dropped.set(entry.id, route);
    if (firing.some((entry) => entry.alert.id === episode)) dropped.set(resolve.id, route);
  }
  return dropped;
}

/** The id of the route that sent the entry to its sink, when it has time intervals. */
function routeWithIntervals(entry: OutboxEntry, routes: Route, rules: RuleLookup<RoutedRule>): string | undefined {
  const rule = rules.get(entry.rule);
  if (rule !== undefined && rule.routed !== true) return undefined;
  const route = routeToSink(routes, labelsOfAlert(entry.alert), entry.sink);
  return route !== undefined && (route.muteTimeIntervals.length > 0 || route.activeTimeIntervals.length > 0) ? route.id : undefined;
}
