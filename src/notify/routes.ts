import { formatLabels, type Labels } from "./labels.js";
import { matches, parseMatcherList, type Matcher } from "./matchers.js";
import { intervalsAt, type NamedTimeInterval } from "./time-intervals.js";

/** Alertmanager's defaults, which the root route has unless it says otherwise. */
export const DEFAULT_GROUP_WAIT_MS = 30_000;
export const DEFAULT_GROUP_INTERVAL_MS = 5 * 60_000;
export const DEFAULT_REPEAT_INTERVAL_MS = 4 * 3600_000;
/** `group_by: ["..."]`: every label, i.e. one group per distinct alert (Alertmanager's special value). */
export const GROUP_BY_ALL = "...";
/** The most alerts one digest of a route holds; a larger group goes as several digests (a sink's message has limits). */
export const ROUTE_DIGEST_MAX = 50;

/** A route as the config writes it (durations in milliseconds), before inheritance. */
export interface RouteSpec {
  matchers?: readonly string[];
  /** A sink name, or several: Alertmanager's receiver bundles integrations, a list of sinks does here. */
  receiver?: string | readonly string[];
  continue?: boolean;
  group_by?: readonly string[];
  group_wait?: number;
  group_interval?: number;
  repeat_interval?: number;
  /** Names of `time_intervals:` during which the route sends nothing (not on the root; not inherited). */
  mute_time_intervals?: readonly string[];
  /** Names of `time_intervals:` outside all of which the route sends nothing (not on the root; not inherited). */
  active_time_intervals?: readonly string[];
  routes?: readonly RouteSpec[];
}

/** A route of the tree with what it inherits filled in. */
export interface Route {
  /** Its key path in the config ("routes", "routes.routes[1]"): its name in output, logs and the store. */
  readonly id: string;
  readonly matchers: readonly Matcher[];
  /** Sink names, never empty (inherited from the parent when the route names none). */
  readonly receivers: readonly string[];
  readonly continue: boolean;
  /** Label names whose values make a group; "all" for `...`; empty: the route's alerts are one group. */
  readonly groupBy: readonly string[] | "all";
  readonly groupWaitMs: number;
  readonly groupIntervalMs: number;
  readonly repeatIntervalMs: number;
  /** Its own `mute_time_intervals`, as Alertmanager's: a child does not inherit them. */
  readonly muteTimeIntervals: readonly NamedTimeInterval[];
  readonly activeTimeIntervals: readonly NamedTimeInterval[];
  readonly routes: readonly Route[];
}

/**
 * The tree with inheritance applied, as Alertmanager applies it: a route without `receiver`,
 * `group_by`, `group_wait`, `group_interval` or `repeat_interval` takes its parent's; the
 * root takes Alertmanager's defaults (30s, 5m, 4h, no group_by). The config checks have
 * proven the matchers and names: a throw here is a wiring mistake.
 */
export function buildRouteTree(spec: RouteSpec, timeIntervals: ReadonlyMap<string, NamedTimeInterval> = new Map()): Route {
  const rootDefaults = {
    receivers: [] as readonly string[],
    groupBy: [] as readonly string[] | "all",
    groupWaitMs: DEFAULT_GROUP_WAIT_MS,
    groupIntervalMs: DEFAULT_GROUP_INTERVAL_MS,
    repeatIntervalMs: DEFAULT_REPEAT_INTERVAL_MS,
  };
  return build(spec, "routes", rootDefaults, timeIntervals);
}

type Inherited = Pick<Route, "receivers" | "groupBy" | "groupWaitMs" | "groupIntervalMs" | "repeatIntervalMs">;

function build(spec: RouteSpec, id: string, parent: Inherited, timeIntervals: ReadonlyMap<string, NamedTimeInterval>): Route {
  const named = (names: readonly string[] | undefined) =>
    (names ?? []).map((name) => {
      const interval = timeIntervals.get(name);
      if (interval === undefined) throw new Error(`${id}: no time interval named "${name}" (the config checks should have said so)`);
      return interval;
    });
  const receivers = spec.receiver === undefined ? parent.receivers : typeof spec.receiver === "string" ? [spec.receiver] : [...spec.receiver];
  const groupBy = spec.group_by === undefined ? parent.groupBy : spec.group_by.includes(GROUP_BY_ALL) ? "all" : [...spec.group_by];
  const own: Inherited = {
    receivers,
    groupBy,
    groupWaitMs: spec.group_wait ?? parent.groupWaitMs,
    groupIntervalMs: spec.group_interval ?? parent.groupIntervalMs,
    repeatIntervalMs: spec.repeat_interval ?? parent.repeatIntervalMs,
  };
  return {
    id,
    matchers: parseMatcherList(spec.matchers ?? []),
    continue: spec.continue ?? false,
    ...own,
    muteTimeIntervals: named(spec.mute_time_intervals),
    activeTimeIntervals: named(spec.active_time_intervals),
    routes: (spec.routes ?? []).map((child, index) => build(child, `${id}.routes[${index}]`, own, timeIntervals)),
  };
}

/**
 * The routes an alert with these labels ends at, in tree order, as Alertmanager's dispatcher
 * finds them: a route whose matchers fail is skipped with its subtree; of a matching route's
 * children, every matching one is followed, stopping after the first that does not
 * `continue`; a matching route none of whose children match is an end itself. The root
 * (which has no matchers) always matches, so the list is never empty.
 */
export function matchRoutes(root: Route, labels: Labels): Route[] {
  return matchFrom(root, labels) ?? [];
}

function matchFrom(route: Route, labels: Labels): Route[] | undefined {
  if (!matches(route.matchers, labels)) return undefined;
  const found: Route[] = [];
  for (const child of route.routes) {
    const below = matchFrom(child, labels);
    if (below === undefined) continue;
    found.push(...below);
    if (!child.continue) break;
  }
  return found.length > 0 ? found : [route];
}

/** The sinks of the routes, each once, in order. */
export function receiversOf(routes: readonly Route[]): string[] {
  return [...new Set(routes.flatMap((route) => route.receivers))];
}

/**
 * The route that sent an alert with these labels to `sink`: the first of its ends that names
 * the sink. (Two ends naming one sink send it once: the outbox holds one entry per alert and
 * sink, grouped by the first.) Undefined when the tree does not send the alert there.
 */
export function routeToSink(root: Route, labels: Labels, sink: string): Route | undefined {
  return matchRoutes(root, labels).find((route) => route.receivers.includes(sink));
}

/** Why a route sends nothing at a moment: in one of its mute intervals, or outside all its active ones. */
export interface RouteMute {
  /** The interval's name; for `active`, the names of the route's active intervals, joined. */
  interval: string;
  kind: "mute" | "active";
}

/**
 * Whether the route is muted at `ms`, as Alertmanager's time mute and time active stages
 * decide it: in any of its `mute_time_intervals` (the first named), or, when it has
 * `active_time_intervals`, in none of them.
 */
export function routeMuteAt(route: Route, ms: number): RouteMute | undefined {
  const [muting] = intervalsAt(route.muteTimeIntervals, ms);
  if (muting !== undefined) return { interval: muting, kind: "mute" };
  if (route.activeTimeIntervals.length > 0 && intervalsAt(route.activeTimeIntervals, ms).length === 0) return { interval: route.activeTimeIntervals.map((n) => n.name).join(", "), kind: "active" };
  return undefined;
}

/** How far ahead routeUnmutedAt looks: a week and a day covers every weekly pattern. */
export const UNMUTE_HORIZON_MS = 8 * 24 * 3600_000;

/**
 * The first minute at or after `ms` when the route is not muted (intervals are minute
 * exact), or undefined when it stays muted for UNMUTE_HORIZON_MS (a months- or years-long
 * interval: the caller looks again then).
 */
export function routeUnmutedAt(route: Route, ms: number): number | undefined {
  const first = Math.ceil(ms / 60_000) * 60_000;
  for (let at = first; at <= ms + UNMUTE_HORIZON_MS; at += 60_000) if (routeMuteAt(route, at) === undefined) return at;
  return undefined;
}

/** A route mute in words: `in mute time interval "offhours"`, `outside its active time intervals (business-hours)`. */
export function describeRouteMute(mute: RouteMute): string {
  return mute.kind === "mute" ? `in mute time interval "${mute.interval}"` : `outside its active time intervals (${mute.interval})`;
}

/** The labels that make an alert's group on a route: the `group_by` ones it has (all of them for `...`). */
export function groupLabels(route: Route, labels: Labels): Labels {
  if (route.groupBy === "all") return labels;
  const out: Record<string, string> = {};
  for (const name of route.groupBy) if (Object.hasOwn(labels, name)) out[name] = labels[name] as string;
  return out;
}

/** The group an alert joins on a route (with the sink, the key of its digests): the route and its group labels. */
export function groupKey(route: Route, labels: Labels): string {
  return `${route.id}:${formatLabels(groupLabels(route, labels))}`;
}

/** A duration as config.yaml writes it: 30s, 5m, 4h, 1h30m. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  const units: Array<[string, number]> = [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1000], ["ms", 1]];
  let rest = ms;
  let out = "";
  for (const [unit, size] of units) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return out;
}

/** One route as `routes --test` and `--tree` print it: its matchers, sinks and grouping. */
export function describeRoute(route: Route): string {
  const matchersText = route.matchers.length === 0 ? "(every alert)" : `{${route.matchers.map(String).join(", ")}}`;
  const groupBy = route.groupBy === "all" ? "..." : route.groupBy.length === 0 ? "(one group)" : route.groupBy.join(", ");
  const cont = route.continue ? "  continue" : "";
  const mute = route.muteTimeIntervals.length === 0 ? "" : `  mute: ${route.muteTimeIntervals.map((n) => n.name).join(", ")}`;
  const active = route.activeTimeIntervals.length === 0 ? "" : `  active: ${route.activeTimeIntervals.map((n) => n.name).join(", ")}`;
  return `${matchersText} → ${route.receivers.join(", ")}  group_by: ${groupBy}  wait ${formatDuration(route.groupWaitMs)}, interval ${formatDuration(route.groupIntervalMs)}, repeat ${formatDuration(route.repeatIntervalMs)}${cont}${mute}${active}`;
}

/** The tree as `routes --tree` prints it: one line a route, indented by depth. */
export function describeRouteTree(root: Route): string[] {
  const lines: string[] = [];
  const walk = (route: Route, depth: number) => {
    lines.push(`${"  ".repeat(depth)}${route.id}  ${describeRoute(route)}`);
    for (const child of route.routes) walk(child, depth + 1);
  };
  walk(root, 0);
  return lines;
}

/** The longest group_interval of the tree: a digest's stamp older than it holds nothing back. */
export function longestGroupInterval(root: Route | undefined): number {
  if (root === undefined) return 0;
  return Math.max(root.groupIntervalMs, ...root.routes.map(longestGroupInterval));
}
