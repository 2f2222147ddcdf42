import type { OutboxEntry } from "../model/outbox-entry.js";

/** Math.max/min over a digest without spreading it into arguments (a large digest would overflow the stack). */
export function extreme(entries: readonly OutboxEntry[], value: (entry: OutboxEntry) => number, pick: (a: number, b: number) => number): number {
  let result: number | undefined;
  for (const entry of entries) result = result === undefined ? value(entry) : pick(result, value(entry));
  return result ?? 0;
}
