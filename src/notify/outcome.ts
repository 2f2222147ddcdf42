import type { OutboxChange } from "../store/types.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import { retryDelayMs, type BackoffPolicy } from "./backoff.js";
import { extreme } from "./extreme.js";

export interface OutcomePolicy {
  /** Failed attempts after which an alert becomes a dead letter. */
  maxAttempts: number;
  /** Age (since the alert entered the outbox) after which a failed alert becomes a dead letter. */
  maxAgeMs: number;
  backoff: BackoffPolicy;
  /** The backoff's jitter; injected so that a test decides it. */
  random: () => number;
}

/** A failed send as the outcome needs it: the message already redacted. */
export interface SendFailure {
  message: string;
  /** The sink says a retry cannot succeed. */
  permanent: boolean;
  /** The receiver's Retry-After, if it sent one. */
  retryAfterMs?: number;
}

export type DeliveryOutcome =
  | { kind: "delivered"; changes: OutboxChange[] }
  | { kind: "dead"; changes: OutboxChange[]; reason: string }
  | {
      kind: "retry";
      changes: OutboxChange[];
      delayMs: number;
      /** Retry-After speaks for the receiver, not for one message: the whole sink waits this long. */
      pauseSinkMs: number | undefined;
    };

/**
 * The last stage of delivery: what one send's result means for its entries. Accepted:
 * delivered. Failed: a dead letter when the error is permanent, the attempts are used up or
 * the oldest entry is past its age; otherwise failed, to be retried after the backoff.
 * Pure, so the rules of retry and dead letters are tested without a sink or a clock.
 */
export function decideOutcome(input: { entries: readonly OutboxEntry[]; attempt: number; failure: SendFailure | undefined; now: number }, policy: OutcomePolicy): DeliveryOutcome {
  const { entries, attempt, failure, now } = input;
  const at = new Date(now).toISOString();
  const ids = entries.map((entry) => entry.id);
  if (failure === undefined) return { kind: "delivered", changes: ids.map((id): OutboxChange => ({ id, kind: "delivered", at })) };

  const { message } = failure;
  const oldest = extreme(entries, (entry) => Date.parse(entry.created_at), Math.min);
  let reason: string | undefined;
  if (failure.permanent) reason = `permanent error: ${message}`;
  else if (attempt >= policy.maxAttempts) reason = `gave up after ${attempt} attempts: ${message}`;
  else if (now - oldest >= policy.maxAgeMs) reason = `gave up after ${attempt} attempts over ${formatDuration(now - oldest)} (max age ${formatDuration(policy.maxAgeMs)}): ${message}`;
  if (reason !== undefined) return { kind: "dead", reason, changes: ids.map((id): OutboxChange => ({ id, kind: "dead", at, reason })) };

  const { retryAfterMs } = failure;
  const delayMs = retryDelayMs(attempt, policy.backoff, retryAfterMs, policy.random);
  const next = new Date(now + delayMs).toISOString();
  return {
    kind: "retry",
    delayMs,
    pauseSinkMs: retryAfterMs !== undefined && retryAfterMs > 0 ? retryAfterMs : undefined,
    changes: ids.map((id): OutboxChange => ({ id, kind: "failed", at, error: message, next_attempt_at: next })),
  };
}

function formatDuration(ms: number): string {
  if (ms >= 3600_000) return `${Math.round(ms / 360_000) / 10} h`;
  if (ms >= 60_000) return `${Math.round(ms / 6_000) / 10} min`;
  if (ms >= 1000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms)} ms`;
}
