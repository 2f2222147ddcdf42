import type { Config } from "../config/types.js";
import type { RepeatIntervalOf } from "../model/alert-status.js";
import { OPERATIONAL_RULE } from "./operational-monitor.js";

/**
 * The one place that decides how often a firing episode is reminded of
 * (docs/reminders-and-inhibition.md): a balance rule's `repeat_interval`, and
 * `operational.repeat_interval` for kaiawatch's own conditions. The monitors that own the
 * episodes ask it with the episode's firing alert, so a route tree (issue 31, item 1) plugs in
 * here by matching the alert's labels and answering its route's `repeat_interval` first.
 */
export function repeatIntervalsOf(config: Pick<Config, "rules" | "operational">): RepeatIntervalOf {
  const byRule = new Map(config.rules.flatMap((rule) => (rule.repeat_interval === undefined ? [] : [[rule.name, rule.repeat_interval] as const])));
  return (alert) => (alert.rule === OPERATIONAL_RULE ? config.operational.repeat_interval : byRule.get(alert.rule));
}
