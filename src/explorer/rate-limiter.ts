import { sleep as timerSleep } from "../common/sleep.js";

export interface RateLimiter {
  /** Resolves when the caller may send; rejects with the signal's reason if aborted first. */
  acquire(signal: AbortSignal): Promise<void>;
  /**
   * Holds every caller for `ms` from now: those that come later and those already waiting
   * for their slot. The explorer's Retry-After is about the key, not about one request: the
   * requests beside the one that was told would only be told again.
   */
  pauseFor(ms: number): void;
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
 * rather than by measuring a loaded machine's timers. A limit of 0 or Infinity spaces
 * nothing, but a pause still holds everyone.
 */
export function createRateLimiter(requestsPerSecond: number, time: RateLimiterTime = {}): RateLimiter {
  const now = time.now ?? (() => performance.now());
  const sleep = time.sleep ?? timerSleep;
  const interval = requestsPerSecond > 0 && requestsPerSecond !== Infinity ? 1000 / requestsPerSecond : 0;
  let next = -Infinity;
  let pausedUntil = -Infinity;
  return {
    async acquire(signal) {
      for (;;) {
        signal.throwIfAborted();
        const at = now();
        const slot = Math.max(at, next, pausedUntil);
        if (interval > 0) next = slot + interval;
        if (slot > at) await sleep(slot - at, signal);
        // A pause that began while this caller waited holds it too: it takes a new slot after the pause.
        if (now() >= pausedUntil) return;
      }
    },
    pauseFor(ms) {
      pausedUntil = Math.max(pausedUntil, now() + ms);
    },
  };
}
