import type { OutboxEntry } from "../model/outbox-entry.js";
import type { PlannedDelivery } from "./admission.js";
import { extreme } from "./extreme.js";

/**
 * Admission's last stage: what is sent now, in outbox order (by each delivery's first entry).
 * A digest goes whole, once its last member's backoff has ended; `waitsUntil` is told when a
 * digest not sent yet becomes due.
 */
export function planSends(due: readonly OutboxEntry[], digests: ReadonlyMap<string, readonly OutboxEntry[]>, singles: readonly OutboxEntry[], now: number, waitsUntil: (time: number) => void): PlannedDelivery[] {
  const order = new Map(due.map((entry, index) => [entry.id, index]));
  const planned: Array<PlannedDelivery & { index: number }> = [];
  for (const [id, members] of digests) {
    const dueAt = extreme(members, (entry) => Date.parse(entry.next_attempt_at), Math.max);
    if (dueAt > now) {
      waitsUntil(dueAt);
      continue;
    }
    const first = members[0];
    if (first) planned.push({ id, rule: first.rule, entries: [...members], index: order.get(first.id) ?? 0 });
  }
  for (const entry of singles) planned.push({ id: entry.alert.id, rule: entry.rule, entries: [entry], index: order.get(entry.id) ?? 0 });
  planned.sort((a, b) => a.index - b.index);
  return planned.map(({ id, rule, entries }) => ({ id, rule, entries }));
}
