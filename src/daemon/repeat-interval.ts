import type { Config } from "../config/types.js";
import type { RepeatIntervalOf } from "../model/alert-status.js";
import { OPERATIONAL_RULE } from "./operational-monitor.js";
import { labelsOfAlert } from "../notify/labels.js";
import { matchRoutes } from "../notify/routes.js";

/**
 * The one place that decides how often a firing episode is reminded of
 * (docs/reminders-and-inhibition.md): a balance rule's `repeat_interval`, and
 * `operational.repeat_interval` for kaiawatch's own conditions. The monitors that own the
 * episodes ask it with the episode's firing alert.
 *
 * With a `routes:` tree, an alert the tree routes (a rule without `notify:`, an operational
 * alert) and whose rule (or `operational:`) sets no `repeat_interval` of its own takes its
 * route's, as in Alertmanager, where it is the route's: the first route its labels end at
 * (docs/routes.md). A rule's own setting wins, as its own `group:` wins over the route's
 * grouping. Reminders are per episode, not per sink: the first route decides for all.
 */
export function repeatIntervalsOf(config: Pick<Config, "rules" | "operational" | "routes">): RepeatIntervalOf {
  const byRule = new Map(config.rules.flatMap((rule) => (rule.repeat_interval === undefined ? [] : [[rule.name, rule.repeat_interval] as const])));
  const routed = new Set(config.rules.flatMap((rule) => (rule.routed ? [rule.name] : [])));
  const { routes } = config;
  return (alert) => {
    const own = alert.rule === OPERATIONAL_RULE ? config.operational.repeat_interval : byRule.get(alert.rule);
    if (own !== undefined || routes === undefined) return own;
    if (alert.rule !== OPERATIONAL_RULE && !routed.has(alert.rule)) return undefined;
    return matchRoutes(routes, labelsOfAlert(alert))[0]?.repeatIntervalMs;
  };
}
