import type { AlertDocument } from "../model/alert-document.js";

/**
 * An alert's labels: name → value, both text. Routes (and inhibition) match on them, as
 * Alertmanager's do. Every alert carries the labels kaiawatch sets (LABELS_SET_BY_KAIAWATCH)
 * and the rule's own `labels:` map.
 */
export type Labels = Readonly<Record<string, string>>;

/**
 * Alertmanager's (and Prometheus's) classic label names: a letter or "_", then letters,
 * digits and "_". Names starting with "__" are reserved for internal use there and here.
 */
export const LABEL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The labels kaiawatch sets itself; a rule's `labels:` may not redefine them. */
export const LABELS_SET_BY_KAIAWATCH = ["rule", "watch", "source", "kind"] as const;

/** Longest label value a rule may write: labels are short names, not messages. */
export const MAX_LABEL_VALUE = 256;

/** Why `name` cannot be a label name a rule writes, or undefined when it can. */
export function labelNameProblem(name: string): string | undefined {
  if (!LABEL_NAME_PATTERN.test(name)) return `"${name}" is not a label name: a letter or "_", then letters, digits or "_" (as Alertmanager's)`;
  if (name.startsWith("__")) return `"${name}": label names starting with "__" are reserved`;
  if ((LABELS_SET_BY_KAIAWATCH as readonly string[]).includes(name)) return `"${name}" is set by kaiawatch (the alert's ${name}); choose another name`;
  return undefined;
}

/** Why `value` cannot be a label value, or undefined when it can. */
export function labelValueProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return `label values are text: quote it ("${String(value)}")`;
  if (value.length > MAX_LABEL_VALUE) return `a label value is at most ${MAX_LABEL_VALUE} characters (this one has ${value.length})`;
  return undefined;
}

/** What an alert's labels are made of. */
export interface LabelInput {
  /** The rule's name (`kaiawatch.operational` for kaiawatch's own alerts). */
  rule: string;
  watch: string;
  /** The record family, `balances`, or `kaiawatch`. */
  source: string;
  /** An operational alert's condition (`source_failing`, `sink_stalled`, …). */
  kind?: string;
  /** The rule's `severity:`, when it sets one. */
  severity?: string;
  /** The rule's own `labels:` (checked by the config: no name of LABELS_SET_BY_KAIAWATCH). */
  labels?: Readonly<Record<string, string>>;
}

/**
 * An alert's labels: the rule's own `labels:`, then `severity` from the rule's `severity:`
 * (the config refuses the two when they disagree), then rule, watch, source and kind, which
 * always win (a stored alert cannot claim another rule's name). Keys sorted, so that the same
 * labels print and hash the same way.
 */
export function alertLabels(input: LabelInput): Labels {
  const out: Record<string, string> = { ...(input.labels ?? {}) };
  if (input.severity !== undefined) out.severity = input.severity;
  out.rule = input.rule;
  out.watch = input.watch;
  out.source = input.source;
  if (input.kind !== undefined) out.kind = input.kind;
  return sortLabels(out);
}

/**
 * The labels of an alert document: those it carries, or (an alert queued before labels
 * existed) the ones its fields give: rule, watch, source, severity and an operational
 * alert's kind.
 */
export function labelsOfAlert(alert: Pick<AlertDocument, "rule" | "watch" | "source" | "severity" | "record" | "labels">): Labels {
  if (alert.labels !== undefined) return alert.labels;
  const record = alert.record as { kind?: unknown } | null;
  const kind = alert.source === "kaiawatch" && record !== null && typeof record === "object" && typeof record.kind === "string" ? record.kind : undefined;
  return alertLabels({ rule: alert.rule, watch: alert.watch, source: alert.source, ...(alert.severity === undefined ? {} : { severity: alert.severity }), ...(kind === undefined ? {} : { kind }) });
}

/** `{a="1", b="2"}`: the labels as Alertmanager prints a label set. */
export function formatLabels(labels: Labels): string {
  return `{${Object.entries(sortLabels(labels))
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
    .join(", ")}}`;
}

function sortLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(labels).sort()) out[name] = labels[name] as string;
  return out;
}
