import { oneLine, truncate } from "../common/text.js";
import { familyOf } from "../families/registry.js";
import { BALANCE_ALERT_SOURCE, type AlertDocument, type RuleSource } from "../model/alert-document.js";
import type { ConditionIssue } from "./parse-condition.js";

/**
 * A rule's `summary` template: plain text with `{{name}}` placeholders, nothing else (no
 * conditions, loops or helpers). Values are inserted as plain text on one line; each sink
 * escapes the result for its own format later. Templates come only from the operator's
 * config; on-chain values are only ever substituted, never interpreted.
 */

/** Variables every alert offers. */
export const COMMON_TEMPLATE_VARIABLES = [
  "id", "rule", "watch", "network", "source", "block", "transaction_hash", "datetime", "summary",
  "link.transaction", "link.block", "link.account", "link.contract", "link.token",
] as const;

/** A token watch's Transfer logs offer these besides event_logs' (see build-alert.ts). */
export const TOKEN_TRANSFER_TEMPLATE_VARIABLES = ["from", "to", "direction", "amount", "token", "token_symbol"] as const;

/**
 * A balance rule's alerts offer these besides the common ones: the reading of its record
 * (see balance-monitor.ts) and `status` (firing or resolved: one template serves both).
 */
export const BALANCE_TEMPLATE_VARIABLES = ["address", "asset", "symbol", "decimals", "balance", "balance_base_units", "condition", "status", "repeat", "episode_id"] as const;

/** The longest a summary may be: one short line; sinks cut further to their own limits. */
export const MAX_SUMMARY_LENGTH = 500;

type Part = string | { name: string };

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const NAME = /^[A-Za-z_][\w]*(?:(?:\.[\w$]+)|(?:\[\d+\]))*$/;

/** Splits a template into text and placeholders; problems are reported, not thrown. */
function parseTemplate(template: string, issues: ConditionIssue[]): Part[] {
  const parts: Part[] = [];
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    const index = m.index;
    if (index > last) parts.push(template.slice(last, index));
    const name = m[1] as string;
    if (!NAME.test(name)) issues.push({ path: [], message: `"{{${name}}}" is not a variable name` });
    parts.push({ name });
    last = index + m[0].length;
  }
  if (last < template.length) parts.push(template.slice(last));
  for (const part of parts) {
    if (typeof part === "string" && part.includes("{{")) issues.push({ path: [], message: `an unclosed "{{" in ${JSON.stringify(template)}` });
  }
  return parts;
}

/** Whether a variable exists for the source. */
export function isTemplateVariable(name: string, family: RuleSource): boolean {
  if ((COMMON_TEMPLATE_VARIABLES as readonly string[]).includes(name)) return true;
  if (/^record(\.|\[|$)/.test(name)) return true;
  const own = ownVariables(family);
  if (own.includes(name)) return true;
  // `topics[i]` and `args.NAME` stand for the topics and the decoded arguments by name.
  return (own.includes("topics[i]") && /^topics\[[0-3]\]$/.test(name)) || (own.includes("args.NAME") && /^args\.[\w$]+$/.test(name));
}

/**
 * Config-time check of a `summary` template for a rule of the given source: every
 * variable must exist. Paths are relative to the template (empty); the caller prefixes them.
 */
export function validateSummaryTemplate(template: unknown, family: RuleSource, extra: readonly string[] = []): ConditionIssue[] {
  if (typeof template !== "string") return [{ path: [], message: "summary is a text template, e.g. \"{{amount_kaia}} KAIA left {{from}}\"" }];
  const issues: ConditionIssue[] = [];
  for (const part of parseTemplate(template, issues)) {
    if (typeof part !== "string" && NAME.test(part.name) && !isTemplateVariable(part.name, family) && !extra.includes(part.name)) {
      const names = [...COMMON_TEMPLATE_VARIABLES, ...ownVariables(family), ...extra, "record.PATH"].join(", ");
      issues.push({ path: [], message: `unknown variable "{{${part.name}}}" for ${family}; variables: ${names}` });
    }
  }
  return issues;
}

function ownVariables(source: RuleSource): readonly string[] {
  return source === BALANCE_ALERT_SOURCE ? BALANCE_TEMPLATE_VARIABLES : familyOf(source).templateVariables;
}

/** The value of a template variable in a balance alert (see BALANCE_TEMPLATE_VARIABLES). */
export function balanceTemplateValue(name: string, alert: AlertDocument): unknown {
  if (name.startsWith("link.")) return alert.links[name.slice(5) as keyof AlertDocument["links"]];
  if (name === "record" || name.startsWith("record.") || name.startsWith("record[")) return readPath(alert.record, name.slice(6));
  switch (name) {
    case "id": case "rule": case "watch": case "network": case "source": case "block": case "transaction_hash": case "datetime": case "summary":
      return alert[name];
    case "status":
      return alert.status;
    // A firing alert's counter (0, then 1, 2 … on reminders; absent on the resolve) and its episode.
    case "repeat":
      return alert.repeat;
    case "episode_id":
      return alert.episode_id;
  }
  return (BALANCE_TEMPLATE_VARIABLES as readonly string[]).includes(name) ? readPath(alert.record, `.${name}`) : undefined;
}

/** ".a.b[0].c" or ".a.b.0.c" into a value; own properties only. */
export function readPath(value: unknown, path: string): unknown {
  const steps = path.split(/\.|\[(\d+)\]/).filter((s) => s !== undefined && s !== "");
  let current = value;
  for (const step of steps) {
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, step)) return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

const parsedCache = new Map<string, Part[]>();

/**
 * Renders a template with `lookup(name)` for each placeholder. Absent values render as
 * nothing; objects as compact JSON; every value is flattened to one line.
 */
export function renderTemplate(template: string, lookup: (name: string) => unknown): string {
  let parts = parsedCache.get(template);
  if (parts === undefined) {
    parts = parseTemplate(template, []);
    if (parsedCache.size < 1000) parsedCache.set(template, parts);
  }
  let out = "";
  for (const part of parts) out += typeof part === "string" ? part : oneLine(stringify(lookup(part.name)));
  return truncate(out, MAX_SUMMARY_LENGTH);
}

function stringify(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value) ?? "";
}
