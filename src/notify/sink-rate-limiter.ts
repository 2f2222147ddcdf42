import { sleep } from "./waker.js";

export interface SinkRateLimiter {
  /** Resolves when the caller may start a send; rejects with the signal's reason if aborted first. */
  acquire(signal: AbortSignal): Promise<void>;
  /** No send starts before `ms` from now (the receiver's Retry-After applies to the whole sink). */
  pause(ms: number): void;
}

/**
 * Spaces the starts of a sink's sends at least 1/ratePerSecond apart (Slack accepts one
 * message a second per webhook). Each caller reserves the next free slot synchronously, so
 * concurrent sends queue in order without a lock. Monotonic clock: a wall-clock jump must
 * neither stall a sink nor let a burst through.
 */
export function createSinkRateLimiter(ratePerSecond: number | undefined, clock: () => number = () => performance.now()): SinkRateLimiter {
  const interval = ratePerSecond !== undefined && ratePerSecond > 0 && Number.isFinite(ratePerSecond) ? 1000 / ratePerSecond : 0;
  let next = -Infinity;
  return {
    async acquire(signal) {
      signal.throwIfAborted();
      const now = clock();
      const slot = Math.max(now, next);
      next = slot + interval;
      if (slot > now) await sleep(slot - now, signal);
    },
    pause(ms) {
      next = Math.max(next, clock() + ms);
    },
  };
}
