import type { OutboxEntry } from "../model/outbox-entry.js";
import type { SuppressionReason } from "./cooldown.js";

/** Why a muter holds an alert back, with what the record of the hold names. */
export interface Mute {
  reason: Exclude<SuppressionReason, "cooldown">;
  /** The silence that held it, when `reason` is "silence". */
  silenceId?: string;
  /** The inhibit rule and the firing source that held it, when `reason` is "inhibited". */
  inhibition?: { rule: string; source: string };
  /** The route muted, by which time interval, and why in words after the route ("is in mute time interval …"), when `reason` is "muted". */
  timeInterval?: { route: string; interval: string; why: string };
  /**
   * When the entry is tried again instead of being dropped (ms): a firing episode (or its
   * resolve) muted by a time interval waits for the interval's end, to be sent then if it
   * still fires.
   */
  until?: number;
}

/**
 * One reason to hold an alert back before its sink hears of it, as Alertmanager's
 * `notify.Muter`: silences, inhibition, time intervals. Each decides alone, from plain data it was built with.
 */
export interface Muter {
  /** The mute that holds back this entry on its sink at `now`, or undefined. */
  mutes(entry: OutboxEntry, now: number): Mute | undefined;
}

/**
 * Admission's mute stage (Alertmanager's MuteStage, one for all its muters): the first muter
 * that mutes an entry decides, in the order given, so silences come before inhibition, and inhibition before time intervals. It is
 * asked once per alert, before its first attempt: a retry is never held back.
 */
export function muteStage(muters: readonly Muter[]): (entry: OutboxEntry, now: number) => Mute | undefined {
  return (entry, now) => {
    if (entry.attempts !== 0) return undefined;
    for (const muter of muters) {
      const mute = muter.mutes(entry, now);
      if (mute !== undefined) return mute;
    }
    return undefined;
  };
}
