import type { ConfigIssue } from "./errors.js";
import { didYouMean } from "./suggest.js";
import { namedTimeIntervalSchema, routeSchema } from "./schema.js";
import { GROUP_BY_ALL, buildRouteTree, type Route } from "../notify/routes.js";
import { parseNamedTimeIntervals, type NamedTimeIntervalSpec } from "../notify/time-intervals.js";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The `routes:` tree, built, and what its schema cannot check: the root matches every alert
 * and names a receiver (alerts no child takes go there), `continue` means nothing at the root,
 * every receiver is a sink that takes alerts, `...` in group_by stands alone, the root has no
 * time intervals and every one a route names is in `time_intervals:`. Each problem at its key
 * path. Undefined when there is no tree or it has a problem.
 */
export function resolveRoutes(raw: unknown, rawSinks: Record<string, unknown>, issues: Array<ConfigIssue & { atKey?: boolean }>, rawTimeIntervals: unknown = []): Route | undefined {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) return undefined; // the schema says what it expected
  const before = issues.length;
  if (raw.receiver === undefined) issues.push({ path: ["routes"], message: "the root route needs a receiver: where the alerts no child route takes go", atKey: true });
  if (raw.matchers !== undefined) issues.push({ path: ["routes", "matchers"], message: "the root route matches every alert: move these matchers to a child route (under routes.routes)" });
  if (raw.continue !== undefined) issues.push({ path: ["routes", "continue"], message: "continue means nothing at the root route (it has no siblings): remove it" });
  for (const key of ["mute_time_intervals", "active_time_intervals"]) {
    if (raw[key] !== undefined) issues.push({ path: ["routes", key], message: `the root route must not have any ${key.replace(/_/g, " ").replace(/s$/, "s")}: name them on a child route` });
  }
  // Every name written counts as defined: a broken interval is reported once, at its own place.
  const intervalSpecs = Array.isArray(rawTimeIntervals) ? rawTimeIntervals : [];
  const intervalNames = new Set(intervalSpecs.flatMap((spec) => (isRecord(spec) && typeof spec.name === "string" ? [spec.name] : [])));
  walk(raw, ["routes"], rawSinks, issues, intervalNames);
  const parsed = routeSchema.safeParse(raw);
  if (!parsed.success || issues.length > before) return undefined;
  const valid = intervalSpecs.flatMap((spec) => {
    const read = namedTimeIntervalSchema.safeParse(spec);
    return read.success ? [read.data as NamedTimeIntervalSpec] : [];
  });
  if (valid.length !== intervalSpecs.length) return undefined;
  return buildRouteTree(parsed.data, parseNamedTimeIntervals(valid));
}

function walk(route: Record<string, unknown>, path: Array<string | number>, rawSinks: Record<string, unknown>, issues: ConfigIssue[], intervalNames: ReadonlySet<string>): void {
  const receiver = route.receiver;
  const names: Array<[string, Array<string | number>]> =
    typeof receiver === "string" ? [[receiver, [...path, "receiver"]]] : Array.isArray(receiver) ? receiver.flatMap((name, j) => (typeof name === "string" ? [[name, [...path, "receiver", j]] as [string, Array<string | number>]] : [])) : [];
  for (const [name, at] of names) {
    const sink = rawSinks[name];
    if (sink === undefined) issues.push({ path: at, message: `no sink named "${name}"${didYouMean(name, Object.keys(rawSinks))}` });
    else if (isRecord(sink) && sink.type === "heartbeat") issues.push({ path: at, message: `"${name}" is a heartbeat sink: it pings while kaiawatch is ready and receives no alerts (name another sink)` });
  }
  if (Array.isArray(route.group_by) && route.group_by.includes(GROUP_BY_ALL) && route.group_by.length > 1) {
    issues.push({ path: [...path, "group_by"], message: '"..." groups by every label already: list it alone' });
  }
  for (const key of ["mute_time_intervals", "active_time_intervals"]) {
    const names = route[key];
    if (!Array.isArray(names)) continue;
    names.forEach((name, j) => {
      if (typeof name === "string" && !intervalNames.has(name)) issues.push({ path: [...path, key, j], message: `undefined time interval "${name}" used in route${didYouMean(name, [...intervalNames])}` });
    });
  }
  if (Array.isArray(route.routes)) route.routes.forEach((child, i) => isRecord(child) && walk(child, [...path, "routes", i], rawSinks, issues, intervalNames));
}
