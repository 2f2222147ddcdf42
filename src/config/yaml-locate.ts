import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type Node } from "yaml";

export type ConfigPath = ReadonlyArray<string | number>;

/** `watches[1].account`, `sinks.ops-slack.url`, `headers["X Weird"]`. */
export function formatPath(path: ConfigPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function keyText(key: unknown): string | undefined {
  // A merge key's value is a symbol; what was written is its source, `<<`.
  if (isScalar(key)) return typeof key.value === "symbol" ? (key.source ?? "<<") : String(key.value);
  if (key === null || key === undefined) return undefined;
  return String(key);
}

function deref(node: unknown, doc: Document): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

/**
 * The source offset to report for `path`. A value's problem points at the value; an
 * unknown key (`atKey`) at the key; a missing key at the closest enclosing key or node
 * that exists, so "required" lands on the map that lacks it.
 */
export function offsetOfPath(doc: Document, path: ConfigPath, atKey = false): number {
  let node: unknown = deref(doc.contents, doc);
  let keyNode: Node | undefined;
  let fallback = (node as Node | null)?.range?.[0] ?? 0;
  for (const segment of path) {
    let next: unknown;
    let nextKey: Node | undefined;
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(segment));
      if (pair) {
        nextKey = isScalar(pair.key) ? pair.key : undefined;
        next = pair.value ?? undefined;
        if (next === undefined && nextKey) return nextKey.range?.[0] ?? fallback;
      }
    } else if (isSeq(node) && typeof segment === "number") {
      next = node.items[segment];
    }
    if (next === undefined) return keyNode?.range?.[0] ?? fallback;
    keyNode = nextKey;
    node = deref(next, doc);
    fallback = (node as Node | null)?.range?.[0] ?? keyNode?.range?.[0] ?? fallback;
  }
  if (atKey && keyNode?.range) return keyNode.range[0];
  // An empty value (`account:`) has no text of its own; its key is the better place.
  if (isScalar(node) && node.value === null && node.source === "" && keyNode?.range) return keyNode.range[0];
  return fallback;
}

/** The deepest path whose key or value contains `offset` (to name the place of a YAML error). */
export function pathAtOffset(doc: Document, offset: number): Array<string | number> {
  const path: Array<string | number> = [];
  let node: unknown = doc.contents;
  const contains = (n: unknown) => {
    const range = (n as Node | null)?.range;
    return range !== undefined && range !== null && offset >= range[0] && offset < Math.max(range[2], range[0] + 1);
  };
  for (let depth = 0; depth < 64; depth++) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && (contains(p.key) || contains(p.value)));
      if (!pair) break;
      const key = keyText(pair.key);
      if (key === undefined) break;
      path.push(key);
      if (contains(pair.key)) break;
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findIndex((item) => contains(item));
      if (index === -1) break;
      path.push(index);
      node = node.items[index];
    } else break;
  }
  return path;
}
