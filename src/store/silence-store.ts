import type { Silence } from "../model/silence.js";

/** A silence as the store keeps it, with the alerts it held back (counted by every process that applied it). */
export interface StoredSilence extends Silence {
  suppressed: number;
}

/**
 * The silences, one row each, in the store itself (a table on both backends), shared by the
 * daemon, its replicas and `kaiawatch silence`: a silence added through any of them is seen
 * by all at their next read. Rows never change but for a removal (removed_at) and the count;
 * a row is deleted a day after its silence expired.
 */
export interface SilenceStore {
  /** The silences in force at `now` (not removed, not expired), oldest first. */
  active(now: number): Promise<StoredSilence[]>;
  add(silence: Silence): Promise<void>;
  /** Removes the silence in force with this id; returns it, or undefined when there is none. */
  remove(id: string, now: number): Promise<Silence | undefined>;
  /** Adds to the counts of alerts held back: silence id → how many more. */
  count(held: ReadonlyMap<string, number>): Promise<void>;
}

/** The columns of a silence row besides its id and times: an absent rule and no matchers are NULL. */
export function silenceColumns(silence: Silence): { rule: string | null; matchers: string | null } {
  return { rule: silence.rule ?? null, matchers: silence.matchers === undefined || silence.matchers.length === 0 ? null : JSON.stringify(silence.matchers) };
}

/** A silence from its row's columns (the match and matchers already parsed from JSON). */
export function silenceOfColumns(row: { id: string; rule: string | null; match: Record<string, string>; matchers: string[] | null; reason: string; created_at: string; expires_at: string }): Silence {
  return {
    id: row.id,
    ...(row.rule === null ? {} : { rule: row.rule }),
    match: row.match,
    ...(row.matchers === null || row.matchers.length === 0 ? {} : { matchers: row.matchers }),
    reason: row.reason,
    created_at: row.created_at,
    expires_at: row.expires_at,
  };
}

/** How long a row outlives its silence (for a `silence list` just after expiry it is simply gone). */
export const KEEP_EXPIRED_MS = 24 * 3600_000;

/** The expiry of a silence in milliseconds, refusing one that is not a date (it would never end, or end at once). */
export function expiresMsOf(silence: Silence): number {
  const expires = Date.parse(silence.expires_at);
  if (Number.isNaN(expires)) throw new TypeError(`a silence's expires_at is not an ISO-8601 date: ${silence.expires_at}`);
  return expires;
}
