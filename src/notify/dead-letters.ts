import type { OutboxEntry } from "../model/outbox-entry.js";
import type { OutboxChange, Store } from "../store/types.js";

/** Which dead letters `retry` sends again: entry ids, alert ids or group ids, or all of them. */
export type DeadLetterSelector = { all: true } | { ids: readonly string[] };

export interface RequeueResult {
  requeued: number;
  /** Given ids that matched no dead letter. */
  unmatched: string[];
}

/**
 * Puts dead letters back into the outbox (attempts reset, digest dissolved so that it is
 * gathered again). An id may name an entry, an alert (its entries for every sink) or a digest.
 */
export async function requeueDeadLetters(store: Store, selector: DeadLetterSelector, now: number): Promise<RequeueResult> {
  const dead = await store.listOutbox({ state: "dead" });
  let chosen: OutboxEntry[];
  const unmatched: string[] = [];
  if ("all" in selector) {
    chosen = dead;
  } else {
    const picked = new Map<string, OutboxEntry>();
    for (const id of selector.ids) {
      const matches = dead.filter((entry) => entry.id === id || entry.alert.id === id || entry.group_id === id);
      if (matches.length === 0) unmatched.push(id);
      for (const entry of matches) picked.set(entry.id, entry);
    }
    chosen = [...picked.values()];
  }
  if (chosen.length > 0) {
    const at = new Date(now).toISOString();
    await store.updateOutbox(chosen.map((entry): OutboxChange => ({ id: entry.id, kind: "requeue", at })));
  }
  return { requeued: chosen.length, unmatched };
}
