import { isAlias, isCollection, isPair, type Document, type Node } from "yaml";

/**
 * How deep maps and lists may nest. The deepest real config is a rule condition of a few
 * `all`/`any`/`not` levels; past this, the recursive walks that follow parsing (anchors,
 * the schema, key paths) would exhaust the stack and crash with "Maximum call stack size
 * exceeded" instead of naming the place.
 */
export const MAX_CONFIG_DEPTH = 64;

/**
 * The first node nested deeper than `limit`, found without recursion (the point is not to
 * need the stack), or undefined.
 */
export function tooDeepNode(doc: Document, limit = MAX_CONFIG_DEPTH): Node | undefined {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: doc.contents, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (!isCollection(node)) continue;
    if (depth >= limit) return node;
    for (const item of node.items) {
      if (isPair(item)) {
        stack.push({ node: item.key, depth: depth + 1 });
        stack.push({ node: item.value, depth: depth + 1 });
      } else if (!isAlias(item)) stack.push({ node: item, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * The YAML parser itself recurses per level, and on a deep enough text (a 200 KB line of
 * `[`) it runs out of stack or memory before it can report anything. So the text is
 * scanned first, without parsing: flow brackets outside quotes and comments, plus block
 * indentation levels. The scan may overcount (an unbalanced "[" inside a plain scalar), so
 * it only guards the parser, at four times the limit; the exact check is tooDeepNode.
 */
export const SCAN_DEPTH_LIMIT = MAX_CONFIG_DEPTH * 4;

/** The offset where the text nests past SCAN_DEPTH_LIMIT, or undefined. */
export function tooDeepOffset(text: string, limit = SCAN_DEPTH_LIMIT): number | undefined {
  let flow = 0;
  const indents: number[] = [];
  let quote: string | undefined;
  let lineStart = true;
  let previous = "\n";
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? "";
    if (c === "\n") {
      lineStart = true;
      previous = c;
      continue;
    }
    if (quote !== undefined) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = undefined;
      previous = c;
      continue;
    }
    if (lineStart && flow === 0) {
      // Block context: the indentation of this line and each "- " that opens a nested list.
      let j = i;
      while (text[j] === " ") j++;
      if (text[j] === "\n" || text[j] === "#" || j >= text.length) {
        i = text.indexOf("\n", j) === -1 ? text.length : text.indexOf("\n", j) - 1;
        continue;
      }
      const indent = j - i;
      while (indents.length > 0 && (indents[indents.length - 1] ?? 0) >= indent) indents.pop();
      indents.push(indent);
      let depth = indents.length;
      if (depth > limit) return j;
      while (text[j] === "-" && (text[j + 1] === " " || text[j + 1] === "\n")) {
        if (++depth > limit) return j;
        j += 2;
        while (text[j] === " ") j++;
      }
      i = j - 1;
      lineStart = false;
      previous = " ";
      continue;
    }
    lineStart = false;
    if (c === "#" && (previous === " " || previous === "\t" || previous === "\n")) {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end - 1;
      continue;
    }
    if ((c === '"' || c === "'") && /[\s[{,:]/.test(previous)) quote = c;
    else if (c === "[" || c === "{") {
      flow++;
      if (flow + indents.length > limit) return i;
    } else if ((c === "]" || c === "}") && flow > 0) flow--;
    previous = c;
  }
  return undefined;
}
