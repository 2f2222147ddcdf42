import type { Need } from "./source-needs.js";

/** Needs that could share a source, together: connected through their own and candidate source keys. */
export function groupNeeds<R, W>(needs: Need<R, W>[]): Need<R, W>[][] {
  // Groups: union-find over source keys (own and shared candidates).
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    while (parent.get(root) !== root) root = parent.get(root) as string;
    for (let k = key; k !== root; ) {
      const next = parent.get(k) as string;
      parent.set(k, root);
      k = next;
    }
    return root;
  };
  const union = (a: string, b: string) => {
    for (const k of [a, b]) if (!parent.has(k)) parent.set(k, k);
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(ra, rb);
  };
  for (const need of needs) {
    union(need.ownKey, need.ownKey);
    for (const c of need.candidates) union(need.ownKey, c.key);
  }
  const byRoot = new Map<string, Need<R, W>[]>();
  for (const need of needs) {
    const root = find(need.ownKey);
    const list = byRoot.get(root);
    if (list) list.push(need);
    else byRoot.set(root, [need]);
  }
  return [...byRoot.values()];
}
