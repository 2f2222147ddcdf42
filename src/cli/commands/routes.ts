import { cleanLine } from "../../common/sanitize-text.js";
import type { Config } from "../../config/index.js";
import { LABEL_NAME_PATTERN, alertLabels, formatLabels, type Labels } from "../../notify/labels.js";
import { describeRoute, describeRouteMute, describeRouteTree, groupLabels, matchRoutes, receiversOf, routeMuteAt, type Route } from "../../notify/routes.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, UsageError, loadConfigForCommand, parseCommandArgs, ruleNamed } from "../bootstrap.js";
import { EXIT_OK, EXIT_RUNTIME, type Command, type CommandIO } from "../command.js";

const HELP = `Usage: kaiawatch routes [--tree] [--test] [--rule NAME] [LABEL=VALUE …] [--time ISO] [--verify SINKS] [options]

Shows the routes: tree of the config and where an alert would go, like Alertmanager's
\`amtool config routes test\`. It reads the config only (no store, no network).

  kaiawatch routes                              the tree, one route a line
  kaiawatch routes --test severity=critical team=treasury
  kaiawatch routes --test --rule big-outflow    the labels of a rule's alerts

--test prints the sinks the alert reaches on its first line (comma-separated), then each
route it ends at: its key path in the config, its matchers, sinks and grouping
(group_by, group_wait, group_interval, repeat_interval) and the alert's group there.
A rule with its own notify: goes to those sinks, past the tree: --rule says so.
A route with mute_time_intervals or active_time_intervals says whether it is muted at
--time (default: now) and by which interval: "MUTED at … (in mute time interval …)".

Labels are the alert's: a rule's alerts carry rule, watch and source, its severity and
its labels: map; kaiawatch's operational alerts carry rule=kaiawatch.operational,
source=kaiawatch, kind (source_failing, sink_stalled, …) and the watch or sink they are
about. A label not given is empty, as in Alertmanager.

Options:
  --test           show where an alert with the given labels would go
  --rule NAME      start from the labels of this rule's alerts (LABEL=VALUE adds or replaces)
  --tree           print the tree (with --test: the routes the alert ends at marked ◀)
  --time ISO       with --test: the moment the time intervals are read at, e.g. 2026-03-29T08:30:00+02:00 (default: now)
  --verify SINKS   with --test: exit 1 unless the sinks are exactly these (comma-separated, any order)
${CONFIG_OPTIONS_HELP}
`;

export const routesCommand: Command = { help: HELP, run };

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, { ...CONFIG_OPTIONS, test: { type: "boolean" }, tree: { type: "boolean" }, rule: { type: "string" }, verify: { type: "string" }, time: { type: "string" } }, true);
  const testing = values.test === true || values.rule !== undefined;
  if (!testing && positionals.length > 0) throw new UsageError(`labels are for --test: kaiawatch routes --test ${positionals.map((p) => cleanLine(p, 40)).join(" ")}`);
  if (!testing && values.verify !== undefined) throw new UsageError("--verify needs --test");
  if (!testing && values.time !== undefined) throw new UsageError("--time needs --test");
  const at = values.time === undefined ? Date.now() : Date.parse(values.time);
  if (Number.isNaN(at)) throw new UsageError(`--time: not a time: "${cleanLine(values.time ?? "", 60)}"; write ISO 8601, e.g. 2026-03-29T08:30:00Z`);
  const given = parseLabelArgs(positionals);
  const loaded = await loadConfigForCommand(io, values.config);
  if (typeof loaded === "number") return loaded;
  const { config } = loaded;
  const out = (line: string) => io.stdout.write(`${line}\n`);

  const rule = values.rule === undefined ? undefined : ruleNamed(config, values.rule);
  if (rule !== undefined && !rule.routed) {
    const sinks = rule.notify;
    out(sinks.join(","));
    out(`  rule ${rule.name} has notify: its alerts go to ${sinks.join(", ")}, past the routes: tree`);
    return verify(values.verify, sinks, io);
  }
  const root = config.routes;
  if (root === undefined) throw new UsageError("the config has no routes: tree (each rule's notify: names its sinks); see docs/routes.md");
  if (!testing) {
    for (const line of describeRouteTree(root)) out(line);
    return EXIT_OK;
  }

  const labels: Labels = { ...(rule === undefined ? {} : ruleLabels(rule)), ...given };
  const ends = matchRoutes(root, labels);
  const sinks = receiversOf(ends);
  out(sinks.join(","));
  out(`  labels ${formatLabels(labels)}`);
  if (values.tree === true) {
    const marked = new Set(ends.map((route) => route.id));
    for (const line of describeRouteTree(root)) out(`  ${line}${marked.has(line.trim().split(/\s/)[0] ?? "") ? "  ◀" : ""}`);
  } else {
    for (const route of ends) {
      out(`  ${route.id}  ${describeRoute(route)}`);
      out(`    group ${formatLabels(groupLabels(route, labels))}${missingGroupLabels(route, labels)}`);
      if (route.muteTimeIntervals.length === 0 && route.activeTimeIntervals.length === 0) continue;
      const mute = routeMuteAt(route, at);
      const when = new Date(at).toISOString();
      // Muted, the alert still ends here: recorded as muted, not sent, and not passed to a sibling.
      out(mute === undefined ? `    not muted at ${when}` : `    MUTED at ${when} (${describeRouteMute(mute)}): recorded, not sent`);
    }
  }
  return verify(values.verify, sinks, io);
}

/**
 * The group_by names these labels lack, said after the group: an alert without one joins the
 * group of every alert without it (as in Alertmanager), which a `group {}` alone hides.
 */
function missingGroupLabels(route: Route, labels: Labels): string {
  if (route.groupBy === "all") return "";
  const missing = route.groupBy.filter((name) => !Object.hasOwn(labels, name));
  return missing.length === 0 ? "" : `  (no ${missing.join(", ")}: one group with every alert that has none)`;
}

/** The labels of a rule's alerts, as the daemon sets them. */
function ruleLabels(rule: Config["rules"][number]): Labels {
  return alertLabels({ rule: rule.name, watch: rule.watch, source: rule.source, labels: rule.labels, ...(rule.severity === undefined ? {} : { severity: rule.severity }) });
}

function parseLabelArgs(args: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const arg of args) {
    const at = arg.indexOf("=");
    const name = at < 0 ? arg : arg.slice(0, at);
    if (at < 0 || !LABEL_NAME_PATTERN.test(name)) throw new UsageError(`not a label: "${cleanLine(arg, 80)}"; write NAME=VALUE, e.g. severity=critical`);
    labels[name] = arg.slice(at + 1);
  }
  return labels;
}

function verify(expected: string | undefined, sinks: readonly string[], io: CommandIO): number {
  if (expected === undefined) return EXIT_OK;
  const want = expected.split(",").map((s) => s.trim()).filter((s) => s !== "").sort();
  const got = [...sinks].sort();
  if (want.length === got.length && want.every((name, i) => name === got[i])) return EXIT_OK;
  io.stderr.write(`kaiawatch: routes --verify: expected ${want.join(",") || "(none)"}, the alert goes to ${got.join(",") || "(none)"}\n`);
  return EXIT_RUNTIME;
}
