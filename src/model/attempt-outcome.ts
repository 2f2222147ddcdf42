/**
 * What became of one delivery attempt (the delivery history): delivered; failed, to be retried;
 * dead, a failure that made the alert a dead letter; suppressed, held back by a silence or a
 * cooldown and never sent.
 */
export type AttemptOutcome = "delivered" | "failed" | "dead" | "suppressed";

export const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = ["delivered", "failed", "dead", "suppressed"];
