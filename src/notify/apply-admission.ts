import type { Common } from "../common/common.js";
import type { CooldownStamp, OutboxChange, Store } from "../store/types.js";
import type { Admission, HeldEntry } from "./admission.js";
import type { Inhibitor } from "./inhibitor.js";
import { MUTED_UNTIL } from "./time-interval-muter.js";
import type { SilenceBook } from "./silences.js";

export interface ApplyAdmissionOptions {
  store: Store;
  common: Common;
  silences?: Pick<SilenceBook, "noteHeld">;
  inhibitor?: Pick<Inhibitor, "noteHeld">;
  logger: Common["logger"];
}

/**
 * Writes what admission decided for one pass of a sink before any send starts: held-back
 * entries marked delivered with a note of why, the digests' group ids, and the cooldown stamps
 * that the sends about to start begin. Returns how many entries were held back.
 */
export async function applyAdmission(options: ApplyAdmissionOptions, sink: string, admission: Admission, now: number): Promise<number> {
  const { store, common } = options;
  const at = new Date(now).toISOString();
  const stamps: CooldownStamp[] = admission.cooldownStarts.map((start) => ({ sink, rule: start.rule, key: start.key, at: now, entryId: start.entryId }));

  const { held } = admission;
  if (held.length > 0) {
    // The store has no "suppressed" state: delivered (never dead, which `retry` would resend),
    // with a note of why beside it that `kaiawatch outbox` shows.
    // Each hold is an attempt in the delivery history too (outcome "suppressed"), written with it.
    await store.updateOutbox(held.map(({ entry, reason, inhibition, timeInterval }): OutboxChange => ({ id: entry.id, kind: "delivered", at, suppressed: reason, history: { delivery_id: entry.group_id ?? entry.alert.id, attempt: entry.attempts + 1, error: heldBecause(reason, inhibition, timeInterval) } })));
    const silenceIds = held.flatMap(({ silenceId }) => (silenceId === undefined ? [] : [silenceId]));
    if (silenceIds.length > 0) options.silences?.noteHeld(silenceIds);
    const inhibited = held.flatMap(({ entry, inhibition }) => (inhibition === undefined ? [] : [{ entry, inhibition }]));
    if (inhibited.length > 0) options.inhibitor?.noteHeld(inhibited.map(({ inhibition }) => inhibition.rule));
    for (const { entry, reason } of held) common.metrics.alertsSuppressed.inc({ rule: entry.rule, reason });
    options.logger.info({ rule: held[0]?.entry.rule, count: held.length, silenced: silenceIds.length, inhibited: inhibited.length }, "alerts suppressed by cooldown, silence, inhibition or a time interval");
    // Each inhibited alert by name: which rule and which firing alert held it is what an
    // operator asks afterwards, and the outbox's note says only "inhibited".
    for (const { entry, inhibition } of inhibited) options.logger.info({ alert: entry.alert.id, rule: entry.rule, inhibit_rule: inhibition.rule, source_alert: inhibition.source }, "alert inhibited: held back while its source fires");
    for (const { entry, timeInterval } of held) if (timeInterval !== undefined) options.logger.info({ alert: entry.alert.id, rule: entry.rule, route: timeInterval.route, time_interval: timeInterval.interval, why: timeInterval.why }, "alert muted by its route's time intervals: held back");
  }

  // Deferred: pending still, tried again when the mute ends; the history says so each time.
  if (admission.deferred.length > 0) {
    await store.updateOutbox(
      admission.deferred.map(({ entry, timeInterval, until }): OutboxChange => {
        const untilIso = new Date(until).toISOString();
        const note = `${MUTED_UNTIL}${untilIso}: ${timeInterval?.route ?? "its route"} ${timeInterval?.why ?? ""}`.trim();
        return { id: entry.id, kind: "defer", at, until: untilIso, note, history: { delivery_id: entry.alert.id, attempt: entry.attempts + 1, error: note } };
      }),
    );
    for (const { entry, timeInterval, until } of admission.deferred) options.logger.info({ alert: entry.alert.id, rule: entry.rule, route: timeInterval?.route, time_interval: timeInterval?.interval, until: new Date(until).toISOString() }, "episode alert muted by its route's time intervals: sent when the mute ends");
  }

  const groupChanges: OutboxChange[] = [];
  for (const { group, stamps: started } of admission.closedDigests) {
    for (const entry of group.entries) groupChanges.push({ id: entry.id, kind: "group", group_id: group.id });
    for (const { rule, key } of started) stamps.push({ sink, rule, key, at: now });
  }
  // The group id is durable before the first send: a retry or a restart resends the same
  // digest under the same Delivery id.
  if (groupChanges.length > 0) await store.updateOutbox(groupChanges);
  // The stamps too: a restart (or the replica that takes the sink over) must see a cooldown
  // that a send has started.
  await store.writeCooldowns(stamps);
  return held.length;
}

/** The history's line for a hold: an inhibition names its rule and the alert firing that held it (explain and the log say the same). */
function heldBecause(reason: HeldEntry["reason"], inhibition: HeldEntry["inhibition"], timeInterval: HeldEntry["timeInterval"]): string {
  if (reason === "inhibited" && inhibition !== undefined) return `held back by ${inhibition.rule} while ${inhibition.source} fires`;
  if (reason === "muted" && timeInterval !== undefined) return `muted: ${timeInterval.route} ${timeInterval.why}`;
  return `held back by a ${reason}`;
}
