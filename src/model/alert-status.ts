import type { AlertDocument } from "./alert-document.js";

/** What a resolved alert's id adds to its episode's id: one id family per episode. */
export const RESOLVED_ID_SUFFIX = ":resolved";

/** The id of the alert that resolves the episode whose firing alert has `episodeId`. */
export function resolvedAlertId(episodeId: string): string {
  return `${episodeId}${RESOLVED_ID_SUFFIX}`;
}

/** What a reminder's id adds to its episode's id, before the repeat counter. */
export const REPEAT_ID_INFIX = ":repeat:";

/**
 * The id of the `repeat`-th reminder of the episode whose firing alert has `episodeId`: its
 * own id (a receiver deduplicating on ids must not drop it), of the episode's id family.
 */
export function reminderAlertId(episodeId: string, repeat: number): string {
  return `${episodeId}${REPEAT_ID_INFIX}${repeat}`;
}

/**
 * The episode an alert belongs to: the firing alert's id, also for its reminders and its
 * resolved alert. This is what a receiver correlates on (PagerDuty's dedup_key). A one-shot
 * alert is its own episode. `episode_id` says it where the document carries it; documents
 * stored before it existed are read from the id.
 */
export function episodeIdOf(alert: Pick<AlertDocument, "id" | "status" | "episode_id">): string {
  if (typeof alert.episode_id === "string" && alert.episode_id !== "") return alert.episode_id;
  return alert.status === "resolved" && alert.id.endsWith(RESOLVED_ID_SUFFIX) ? alert.id.slice(0, -RESOLVED_ID_SUFFIX.length) : alert.id;
}

/** The repeat counter of a firing alert read back from the store: n > 0 for a reminder, 0 otherwise. */
export function repeatOf(alert: Pick<AlertDocument, "status" | "repeat">): number {
  return alert.status === "firing" && typeof alert.repeat === "number" && Number.isSafeInteger(alert.repeat) && alert.repeat > 0 ? alert.repeat : 0;
}

/**
 * How long after an episode's last firing alert (the first one or its last reminder) the next
 * reminder is due; undefined: no reminders. One function decides it for every kind of
 * episode (balance rules, kaiawatch's operational conditions): today from the rule's or the
 * `operational:` section's `repeat_interval`, later from the route an alert takes.
 */
export type RepeatIntervalOf = (alert: AlertDocument) => number | undefined;
