import { labelsOfAlert } from "./labels.js";
import type { Muter } from "./mute-stage.js";
import type { RoutedRule } from "./route-grouping.js";
import { describeRouteMute, routeMuteAt, routeToSink, type Route } from "./routes.js";

/**
 * Time intervals as a muter: an alert the tree sent to its sink is held while the route that
 * sent it there is muted (in one of its mute_time_intervals, or outside its
 * active_time_intervals), as Alertmanager's time mute stages hold a route's notifications.
 * The alert still ends at that route: a muted route does not pass it to a sibling. Alerts of a
 * rule with `notify:` go past the tree and are not muted by it.
 */
export function timeIntervalMuter(routes: Route | undefined, rules: ReadonlyMap<string, RoutedRule>): Muter {
  return {
    mutes(entry, now) {
      if (routes === undefined) return undefined;
      const rule = rules.get(entry.rule);
      if (rule !== undefined && rule.routed !== true) return undefined;
      const route = routeToSink(routes, labelsOfAlert(entry.alert), entry.sink);
      const mute = route === undefined ? undefined : routeMuteAt(route, now);
      if (route === undefined || mute === undefined) return undefined;
      return { reason: "muted", timeInterval: { route: route.id, interval: mute.interval, why: describeRouteMute(mute) } };
    },
  };
}
