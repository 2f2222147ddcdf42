import type { Store } from "../store/types.js";
import type { OutboxEntry } from "../model/outbox-entry.js";

/**
 * The one place the dispatcher reads what a sink has to do: its pending entries due at `at`,
 * oldest first, at most `limit` of them, with every member of each digest among them, due or
 * not (a digest is sent whole or not at all, and the limit must not cut one in two).
 * Replicas (issue 15) replace this with a claim, so that two processes never send the same entry.
 */
export async function readDueEntries(store: Store, sink: string, at: string, limit: number): Promise<OutboxEntry[]> {
  const due = await store.listOutbox({ sink, state: "pending", dueBefore: at, limit });
  const ids = new Set(due.map((entry) => entry.id));
  const groups = new Set<string>();
  for (const entry of due) if (entry.group_id !== undefined) groups.add(entry.group_id);
  for (const groupId of groups) {
    for (const member of await store.listOutbox({ sink, state: "pending", groupId })) {
      if (ids.has(member.id)) continue;
      ids.add(member.id);
      due.push(member);
    }
  }
  return due;
}
