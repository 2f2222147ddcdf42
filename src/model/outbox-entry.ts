import type { AlertDocument } from "./alert-document.js";

export type OutboxState = "pending" | "delivered" | "dead";

/** One alert waiting for (or done with) one sink. */
export interface OutboxEntry {
  /** `${alert.id}:${sink}` (see `newOutboxEntries`): unique, and the same on every re-scan of the same record. */
  id: string;
  alert: AlertDocument;
  sink: string;
  rule: string;
  state: OutboxState;
  /** Delivery attempts made so far ("delivered", "failed" and "dead" changes each count one). */
  attempts: number;
  created_at: string;
  next_attempt_at: string;
  /** Set when the dispatcher gathers entries into one digest; stable across retries. */
  group_id?: string;
  last_error?: string;
  dead_reason?: string;
  delivered_at?: string;
}

/**
 * The outbox entries of one alert, one per sink, pending and due now. The poller, replay and
 * kaiawatch's operational alerts all make them here, so that an entry's id is the same
 * `${alert.id}:${sink}` whoever made it: the store's dedup and a receiver's idempotency rest on it.
 */
export function newOutboxEntries(alert: AlertDocument, sinks: readonly string[], now: Date): OutboxEntry[] {
  const at = now.toISOString();
  return sinks.map((sink) => ({
    id: `${alert.id}:${sink}`,
    alert,
    sink,
    rule: alert.rule,
    state: "pending",
    attempts: 0,
    created_at: at,
    next_attempt_at: at,
  }));
}
