import type { AlertDocument } from "./alert-document.js";

/** What a resolved alert's id adds to its episode's id: one id family per episode. */
export const RESOLVED_ID_SUFFIX = ":resolved";

/** The id of the alert that resolves the episode whose firing alert has `episodeId`. */
export function resolvedAlertId(episodeId: string): string {
  return `${episodeId}${RESOLVED_ID_SUFFIX}`;
}

/**
 * The episode an alert belongs to: the firing alert's id, also for its resolved alert. This
 * is what a receiver correlates on (PagerDuty's dedup_key). A one-shot alert is its own episode.
 */
export function episodeIdOf(alert: Pick<AlertDocument, "id" | "status">): string {
  return alert.status === "resolved" && alert.id.endsWith(RESOLVED_ID_SUFFIX) ? alert.id.slice(0, -RESOLVED_ID_SUFFIX.length) : alert.id;
}
