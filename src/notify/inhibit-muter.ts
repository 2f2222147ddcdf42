import { inhibitionOf, type FiringSource, type InhibitRule } from "./inhibit.js";
import { labelsOfAlert } from "./labels.js";
import type { Muter } from "./mute-stage.js";

/**
 * Inhibition as a muter: a target alert is held while a source a rule names fires. A resolve
 * is never held (as a cooldown's): it ends an incident its receiver may have been told about
 * before the source fired, and holding it would leave that incident open.
 */
export function inhibitMuter(rules: readonly InhibitRule[], firing: readonly FiringSource[]): Muter {
  return {
    mutes(entry) {
      if (rules.length === 0 || entry.alert.status === "resolved") return undefined;
      const inhibition = inhibitionOf(rules, firing, labelsOfAlert(entry.alert), entry.alert.episode_id ?? entry.alert.id);
      return inhibition === undefined ? undefined : { reason: "inhibited", inhibition: { rule: inhibition.rule.id, source: inhibition.source.id } };
    },
  };
}
