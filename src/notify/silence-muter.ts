import type { Muter } from "./mute-stage.js";
import { isActive, silenceMatches, type Silence } from "./silences.js";

/** Silences as a muter: the first active silence that matches the alert holds it, named. */
export function silenceMuter(silences: readonly Silence[]): Muter {
  return {
    mutes(entry, now) {
      const silence = silences.find((s) => isActive(s, now) && silenceMatches(s, entry.rule, entry.alert));
      return silence === undefined ? undefined : { reason: "silence", silenceId: silence.id };
    },
  };
}
