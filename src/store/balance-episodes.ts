import { StoreError } from "./errors.js";
import type { BalanceEpisodeChange } from "./types.js";

/** The key of one (rule, address, asset), for messages. */
export function episodeKey(change: Pick<BalanceEpisodeChange, "rule" | "address" | "asset">): string {
  return `${change.rule} ${change.address} ${change.asset}`;
}

/**
 * Refuses a batch that no writer means: two changes of one key (which would be applied in an
 * order the caller did not choose), or an episode carried on under another id (an episode
 * keeps its id from firing to resolve; a new one is opened after the old one is closed).
 * Both backends check the same way before writing anything.
 */
export function checkEpisodeChanges(changes: readonly BalanceEpisodeChange[]): void {
  const seen = new Set<string>();
  for (const change of changes) {
    const key = episodeKey(change);
    if (seen.has(key)) throw new TypeError(`two changes of the balance episode ${key} in one write`);
    seen.add(key);
    if (change.expect !== null && change.next !== null && change.next.alert.id !== change.expect) {
      throw new TypeError(`the balance episode ${key} is ${change.expect}: it cannot go on as ${change.next.alert.id}`);
    }
  }
}

export function episodeConflict(change: BalanceEpisodeChange, stored: string | null): StoreError {
  const found = stored === null ? "none is open" : `${stored} is open`;
  const wanted = change.expect === null ? "none open" : change.expect;
  return new StoreError("KW_STORE_EPISODE_CONFLICT", `the balance episode of ${episodeKey(change)} changed since it was read (expected ${wanted}, ${found}); nothing was written`);
}
