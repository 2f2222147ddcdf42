import type { ConfigIssue } from "./errors.js";
import { didYouMean } from "./suggest.js";
import { routeSchema } from "./schema.js";
import { GROUP_BY_ALL, buildRouteTree, type Route } from "../notify/routes.js";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The `routes:` tree, built, and what its schema cannot check: the root matches every alert
 * and names a receiver (alerts no child takes go there), `continue` means nothing at the root,
 * every receiver is a sink that takes alerts, and `...` in group_by stands alone. Each problem
 * at its key path. Undefined when there is no tree or it has a problem.
 */
export function resolveRoutes(raw: unknown, rawSinks: Record<string, unknown>, issues: Array<ConfigIssue & { atKey?: boolean }>): Route | undefined {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) return undefined; // the schema says what it expected
  const before = issues.length;
  if (raw.receiver === undefined) issues.push({ path: ["routes"], message: "the root route needs a receiver: where the alerts no child route takes go", atKey: true });
  if (raw.matchers !== undefined) issues.push({ path: ["routes", "matchers"], message: "the root route matches every alert: move these matchers to a child route (under routes.routes)" });
  if (raw.continue !== undefined) issues.push({ path: ["routes", "continue"], message: "continue means nothing at the root route (it has no siblings): remove it" });
  walk(raw, ["routes"], rawSinks, issues);
  const parsed = routeSchema.safeParse(raw);
  if (!parsed.success || issues.length > before) return undefined;
  return buildRouteTree(parsed.data);
}

function walk(route: Record<string, unknown>, path: Array<string | number>, rawSinks: Record<string, unknown>, issues: ConfigIssue[]): void {
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
  if (Array.isArray(route.routes)) route.routes.forEach((child, i) => isRecord(child) && walk(child, [...path, "routes", i], rawSinks, issues));
}
