import type { PlannedDelivery } from "./admission.js";
import { extreme } from "./extreme.js";
import { SinkError, type Delivery, type Sink } from "./sink.js";
import type { SinkRateLimiter } from "./sink-rate-limiter.js";

export interface SendOptions {
  sink: Sink;
  /** The sink's rate limit, shared by all its sends (a replica will share it across processes). */
  limiter: SinkRateLimiter;
  /** A send still running after this long is abandoned and counts as a failed attempt. */
  timeoutMs: number;
  /** The worker's signal: aborted when the dispatcher stops. */
  signal: AbortSignal;
  /** Each running send's controller is here while it runs, so that `stop()` can abandon it. */
  running: Set<AbortController>;
  /** The clock the send's latency is measured with (common.now; a test's virtual one). */
  now: () => number;
}

/**
 * - `not-started`: the dispatcher stopped while waiting for the rate limit; nothing was sent.
 * - `abandoned`: `stop()` gave up on the send; whether the receiver got it is unknown.
 * - `accepted` / `failed`: the sink's answer (a timeout is a failure).
 */
export type SendResult =
  | { kind: "not-started" }
  | { kind: "abandoned" }
  | { kind: "accepted"; attempt: number; latencyMs: number; status?: number }
  | { kind: "failed"; attempt: number; latencyMs: number; error: unknown };

/**
 * The second stage of delivery: one admitted delivery becomes one call of its sink, after
 * the sink's rate limit, bounded by the send timeout. It decides nothing about the outcome.
 */
export async function sendDelivery(planned: PlannedDelivery, options: SendOptions): Promise<SendResult> {
  try {
    await options.limiter.acquire(options.signal);
  } catch {
    return { kind: "not-started" };
  }
  const attempt = 1 + extreme(planned.entries, (entry) => entry.attempts, Math.max);
  const delivery: Delivery = { id: planned.id, rule: planned.rule, alerts: planned.entries.map((entry) => entry.alert), attempt };
  const controller = new AbortController();
  options.running.add(controller);
  // From after the rate limit: the time the receiver (and the way to it) took, not the queue's.
  const started = options.now();
  const latency = () => Math.max(0, options.now() - started);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new SinkError("KW_NOTIFY_SEND_TIMEOUT", `the send did not finish within ${options.timeoutMs} ms`, { permanent: false }));
  }, options.timeoutMs);
  try {
    const receipt = await raceAbort(options.sink.send(delivery, controller.signal), controller.signal);
    const status = receipt?.status;
    return { kind: "accepted", attempt, latencyMs: latency(), ...(status === undefined ? {} : { status }) };
  } catch (error) {
    if (timedOut) return { kind: "failed", attempt, latencyMs: latency(), error: controller.signal.reason };
    // Abandoned by stop(), not by the sink: the entries stay pending and go again (same id)
    // after the restart; receivers drop the duplicate by id.
    if (controller.signal.aborted) return { kind: "abandoned" };
    return { kind: "failed", attempt, latencyMs: latency(), error };
  } finally {
    clearTimeout(timer);
    options.running.delete(controller);
  }
}

/** Rejects when the signal aborts, even if the sink ignores it: a hung send must not hold its slot. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
