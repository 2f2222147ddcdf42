import type { Delivery } from "./sink.js";
import type { AlertDocument } from "../model/alert-document.js";
import { TemplateError } from "./errors.js";
import { truncate } from "./escape.js";

/**
 * Logic-less, mustache-style templates written by the operator in the config:
 *
 * - `{{path.to.value}}` inserts a value, escaped by the sink (`{{.}}` is the current item);
 * - `{{#name}}…{{/name}}` renders its body once per item of an array, once with the value
 *   as context when it is truthy, and not at all when it is falsy or an empty array;
 * - `{{^name}}…{{/name}}` renders its body only when the value is falsy or an empty array;
 * - `{{! comment }}` renders nothing.
 *
 * There are no partials, lambdas, delimiter changes or raw (`{{{x}}}`, `{{&x}}`) output, so
 * every value is escaped for its sink while the template's own text is the operator's.
 *
 * Variables (single alert): every field of the alert document — `id`, `rule`, `watch`,
 * `source`, `network`, `block`, `transaction_hash`, `datetime`, `summary`, `created_at`,
 * `links.transaction`, `links.block`, `links.account`, `links.contract`, `links.token`,
 * `record.*` (the explorer record as received), `enrichment.*`, `status` and `severity` (when
 * the alert has them) — plus `digest` (false),
 * `count` (1) and `alerts` (a list holding the alert).
 * Variables (digest): `digest` (true), `id` (the delivery id), `rule`, `count`, `alerts`
 * (the list of alert documents), and `watch`, `source`, `network` of the first alert.
 * Objects and arrays inserted as a variable render as compact JSON.
 */
export interface Template {
  readonly source: string;
  render(context: unknown, escape: (s: string) => string): string;
}

type Node =
  | { kind: "text"; text: string }
  | { kind: "var"; path: string[] }
  | { kind: "section"; path: string[]; inverted: boolean; children: Node[] };

/** One inserted value is cut to this many code points before escaping (a 100 KB name stays a name). */
const MAX_VARIABLE_CODE_POINTS = 2000;

const NAME = /^(?:\.|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)$/;

function positionOf(source: string, index: number): { line: number; column: number } {
  const before = source.slice(0, index);
  const line = before.split("\n").length;
  return { line, column: index - before.lastIndexOf("\n") };
}

/** Parse once (at config load); a syntax error throws TemplateError with line and column. */
export function compileTemplate(source: string): Template {
  const root: Node[] = [];
  const stack: { name: string; at: number; children: Node[] }[] = [];
  let children = root;
  let i = 0;
  const fail = (message: string, at: number): never => {
    throw new TemplateError(message, positionOf(source, at));
  };

  while (i < source.length) {
    const open = source.indexOf("{{", i);
    if (open === -1) {
      children.push({ kind: "text", text: source.slice(i) });
      break;
    }
    if (open > i) children.push({ kind: "text", text: source.slice(i, open) });
    const close = source.indexOf("}}", open + 2);
    if (close === -1) fail("unclosed tag '{{'", open);
    let inner = source.slice(open + 2, close);
    i = close + 2;
    const sigil = inner.charAt(0);
    if (sigil === "!") continue;
    if (sigil === "{" || sigil === "&") fail("raw output ({{{…}}} or {{&…}}) is not supported: every value is escaped", open);
    if (sigil === ">") fail("partials ({{>…}}) are not supported", open);
    if (sigil === "=") fail("delimiter changes ({{=…=}}) are not supported", open);
    if (sigil === "#" || sigil === "^" || sigil === "/") inner = inner.slice(1);
    const name = inner.trim();
    if (!NAME.test(name)) fail(name === "" ? "empty tag" : `invalid name '${name}' (use letters, digits, _ and dots)`, open);
    const path = name === "." ? [] : name.split(".");
    if (sigil === "#" || sigil === "^") {
      const section: Node = { kind: "section", path, inverted: sigil === "^", children: [] };
      children.push(section);
      stack.push({ name, at: open, children });
      children = section.children;
    } else if (sigil === "/") {
      const top = stack.pop();
      if (top === undefined) fail(`'{{/${name}}}' closes no open section`, open);
      else if (top.name !== name) fail(`'{{/${name}}}' does not close '{{#${top.name}}}' (opened at line ${positionOf(source, top.at).line}, column ${positionOf(source, top.at).column})`, open);
      else children = top.children;
    } else {
      children.push({ kind: "var", path });
    }
  }
  const unclosed = stack.pop();
  if (unclosed !== undefined) fail(`section '${unclosed.name}' is never closed`, unclosed.at);

  return {
    source,
    render(context, escape) {
      const out: string[] = [];
      renderNodes(root, [context], escape, out);
      return out.join("");
    },
  };
}

function lookup(stack: unknown[], path: string[]): unknown {
  if (path.length === 0) return stack[stack.length - 1];
  const [first, ...rest] = path as [string, ...string[]];
  for (let i = stack.length - 1; i >= 0; i--) {
    const ctx = stack[i];
    if (isObject(ctx) && Object.hasOwn(ctx, first)) {
      let value: unknown = ctx[first];
      for (const key of rest) {
        // Own properties only: a template cannot reach `constructor` or `__proto__`.
        if (!isObject(value) || !Object.hasOwn(value, key)) return undefined;
        value = value[key];
      }
      return value;
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function toText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) ?? "";
}

function truthy(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 : Boolean(value);
}

function renderNodes(nodes: Node[], stack: unknown[], escape: (s: string) => string, out: string[]): void {
  for (const node of nodes) {
    if (node.kind === "text") out.push(node.text);
    else if (node.kind === "var") out.push(escape(truncate(toText(lookup(stack, node.path)), MAX_VARIABLE_CODE_POINTS)));
    else {
      const value = lookup(stack, node.path);
      if (node.inverted) {
        if (!truthy(value)) renderNodes(node.children, stack, escape, out);
      } else if (Array.isArray(value)) {
        for (const item of value) renderNodes(node.children, [...stack, item], escape, out);
      } else if (truthy(value)) {
        renderNodes(node.children, [...stack, value], escape, out);
      }
    }
  }
}

/** What a template sees for a delivery (see the variable list above). */
export function templateContext(delivery: Delivery): Record<string, unknown> {
  const first: AlertDocument | undefined = delivery.alerts[0];
  if (delivery.alerts.length === 1 && first !== undefined) {
    return { ...first, digest: false, count: 1, alerts: delivery.alerts };
  }
  return {
    digest: true,
    id: delivery.id,
    rule: delivery.rule,
    count: delivery.alerts.length,
    alerts: delivery.alerts,
    watch: first?.watch,
    source: first?.source,
    network: first?.network,
  };
}
