import type { Common } from "../common/common.js";
import { describeError, errorCode } from "../common/errors.js";
import type { AlertDocument } from "../model/alert-document.js";
import type { Delivery, Sink } from "./sink.js";

/** How long one direct send may take before it is given up. */
export const DIRECT_SEND_TIMEOUT_MS = 30_000;

export interface DirectOutcome {
  sink: string;
  accepted: boolean;
  /** Why it was not, secrets scrubbed. */
  error?: string;
}

/**
 * Sends one alert to each of `sinks` at once, not through the outbox: for an alert the outbox
 * cannot take, because the store that holds it is what failed (a damaged store: writes stopped
 * for good). Best effort: one attempt per sink, all at once, each bounded by `timeoutMs` and
 * the shutdown signal, each outcome logged; nothing is retried or recorded. The delivery id is
 * the alert id, as the dispatcher's for a single alert (the Standard Webhooks `webhook-id`).
 */
export async function deliverDirectly(common: Common, sinks: readonly Sink[], alert: AlertDocument, options: { timeoutMs?: number } = {}): Promise<DirectOutcome[]> {
  const logger = common.logger.child({ component: "direct-delivery" });
  const delivery: Delivery = { id: alert.id, rule: alert.rule, alerts: [alert], attempt: 1 };
  const timeoutMs = options.timeoutMs ?? DIRECT_SEND_TIMEOUT_MS;
  return Promise.all(
    sinks.map(async (sink): Promise<DirectOutcome> => {
      const signal = AbortSignal.any([common.signal, AbortSignal.timeout(timeoutMs)]);
      try {
        // Raced with the signal: a sink that does not honour it must not hold the caller.
        await Promise.race([sink.send(delivery, signal), new Promise<never>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true }))]);
        logger.info({ sink: sink.name, alert_id: alert.id }, "alert sent directly (the outbox cannot take it)");
        return { sink: sink.name, accepted: true };
      } catch (error) {
        const text = common.secrets.redact(describeError(error));
        logger.warn({ sink: sink.name, alert_id: alert.id, code: errorCode(error), err: text }, "an alert sent directly (the outbox cannot take it) failed; it is not retried");
        return { sink: sink.name, accepted: false, error: text };
      }
    }),
  );
}
