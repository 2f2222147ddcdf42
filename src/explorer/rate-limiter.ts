import { sleep as timerSleep } from "../common/sleep.js";

export interface RateLimiter {
  /** Resolves when the caller may send; rejects with the signal's reason if aborted first. */
  acquire(signal: AbortSignal): Promise<void>;
}

export interface RateLimiterTime {
  /** Milliseconds on a monotonic clock. Default performance.now: wall-clock jumps must not stall or burst. */
  now?: () => number;
  /** Waits this many milliseconds unless the signal aborts first (then rejects with its reason). Default a timer. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Spaces requests at least 1/requestsPerSecond apart across every caller sharing it. Each
 * caller reserves the next free slot synchronously, so concurrent callers queue in order
 * without a lock. Time is injectable so that tests check the spacing on a fake clock
 * rather than by measuring a loaded machine's timers.
 */
export function createRateLimiter(requestsPerSecond: number, time: RateLimiterTime = {}): RateLimiter {
  if (!(requestsPerSecond > 0) || requestsPerSecond === Infinity) return { acquire: async (signal) => signal.throwIfAborted() };
  const now = time.now ?? (() => performance.now());
  const sleep = time.sleep ?? timerSleep;
  const interval = 1000 / requestsPerSecond;
  let next = -Infinity;
  return {
    async acquire(signal) {
      signal.throwIfAborted();
      const at = now();
      const slot = Math.max(at, next);
      next = slot + interval;
      if (slot > at) await sleep(slot - at, signal);
    },
  };
}
