import { sleep } from "../common/sleep.js";

export interface RateLimiter {
  /** Resolves when the caller may send; rejects with the signal's reason if aborted first. */
  acquire(signal: AbortSignal): Promise<void>;
}

/**
 * Spaces requests at least 1/requestsPerSecond apart across every caller sharing it. Each
 * caller reserves the next free slot synchronously, so concurrent callers queue in order
 * without a lock. Uses the monotonic clock: wall-clock jumps must not stall or burst.
 */
export function createRateLimiter(requestsPerSecond: number, clock: () => number = () => performance.now()): RateLimiter {
  if (!(requestsPerSecond > 0) || requestsPerSecond === Infinity) return { acquire: async (signal) => signal.throwIfAborted() };
  const interval = 1000 / requestsPerSecond;
  let next = -Infinity;
  return {
    async acquire(signal) {
      signal.throwIfAborted();
      const now = clock();
      const slot = Math.max(now, next);
      next = slot + interval;
      if (slot > now) await sleep(slot - now, signal);
    },
  };
}
