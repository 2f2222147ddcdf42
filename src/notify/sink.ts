import { KaiawatchError } from "../common/errors.js";
import type { AlertDocument } from "../model/alert-document.js";

/**
 * One message to a sink: a single alert, or a digest of a rule's alerts gathered by
 * `group`. `id` is stable across retries and becomes the Standard Webhooks `webhook-id`
 * and the email Message-ID, so a receiver can drop the rare duplicate after a crash.
 */
export interface Delivery {
  id: string;
  rule: string;
  alerts: AlertDocument[];
  /** 1 for the first try. */
  attempt: number;
}

/**
 * A sink turns a delivery into the message of its channel and sends it. It never retries
 * by itself: the dispatcher owns retries, backoff and dead letters, and decides from the
 * SinkError what to do.
 */
export interface Sink {
  readonly name: string;
  readonly type: string;
  /** Resolves when the channel accepted it, with what the receiver answered where that is known (the delivery history shows it). */
  send(delivery: Delivery, signal: AbortSignal): Promise<void | SinkReceipt>;
  close?(): Promise<void>;
}

/** What a receiver answered an accepted send. */
export interface SinkReceipt {
  /** The HTTP status code of the answer. */
  status?: number;
}

export class SinkError extends KaiawatchError {
  override name = "SinkError";
  /** A retry cannot succeed (4xx other than 408/429, SMTP 5xx, bad credentials): dead letter now. */
  readonly permanent: boolean;
  /** The receiver asked for this pause (Retry-After). */
  readonly retryAfterMs: number | undefined;
  /** The receiver's HTTP status code, when it answered one (the delivery history shows it). */
  readonly status: number | undefined;

  constructor(code: string, message: string, options: { permanent: boolean; retryAfterMs?: number; status?: number; cause?: unknown; details?: string }) {
    super(code, message, options);
    this.permanent = options.permanent;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
  }
}
