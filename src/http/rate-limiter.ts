import { sleep as timerSleep } from "../common/sleep.js";

export interface RateLimiter {
  /** Resolves when the caller may send; rejects with the signal's reason if aborted first. */
  acquire(signal: AbortSignal): Promise<void>;
  /**
   * The server said the per-second rate was passed (a 429 of type requestPerSecond): halve
   * the rate, down to a floor; it climbs back by itself while no other refusal comes.
   */
  slowDown?(): void;
  /** The requests per second allowed now (Infinity when unlimited). */
  rate?(): number;
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

/** The lowest rate a slowed limiter keeps, as a share of the configured one. */
export const MIN_RATE_SHARE = 1 / 16;
/** Refusals this close together are one burst (requests in flight when the first came back): one halving. */
export const SLOW_DOWN_QUIET_MS = 1_000;
/** While no refusal comes, the rate climbs back by a tenth of the configured rate each step. */
export const RECOVERY_STEP_MS = 5_000;

/**
 * Spaces requests at least 1/rate apart across every caller sharing it. Each caller reserves
 * the next free slot synchronously, so concurrent callers queue in order without a lock.
 * A limit of 0 or Infinity spaces nothing, but a pause still holds everyone.
 *
 * The rate adapts to the server (additive increase, multiplicative decrease): a per-second
 * refusal halves it, and each quiet RECOVERY_STEP_MS gives back a tenth of the configured
 * rate, so a key whose real limit is below `requests_per_second` settles near its limit
 * instead of being refused at full speed. Time is injectable so that tests check the
 * spacing on a fake clock rather than by measuring a loaded machine's timers.
 */
export function createRateLimiter(requestsPerSecond: number, time: RateLimiterTime = {}): RateLimiter {
  const now = time.now ?? (() => performance.now());
  const sleep = time.sleep ?? timerSleep;
  const limited = requestsPerSecond > 0 && requestsPerSecond !== Infinity;
  const configured = limited ? requestsPerSecond : Infinity;
  let current = configured;
  let changedAt = -Infinity;
  let next = -Infinity;
  let pausedUntil = -Infinity;

  /** The rate after the quiet steps since the last change. */
  function recover(at: number): void {
    if (current >= configured) return;
    const steps = Math.floor((at - changedAt) / RECOVERY_STEP_MS);
    if (steps <= 0) return;
    current = Math.min(configured, current + steps * configured * 0.1);
    changedAt += steps * RECOVERY_STEP_MS;
  }

  return {
    async acquire(signal) {
      for (;;) {
        signal.throwIfAborted();
        const at = now();
        recover(at);
        const slot = Math.max(at, next, pausedUntil);
        if (limited) next = slot + 1000 / current;
        if (slot > at) await sleep(slot - at, signal);
        // A pause that began while this caller waited holds it too: it takes a new slot after the pause.
        if (now() >= pausedUntil) return;
      }
    },
    pauseFor(ms) {
      pausedUntil = Math.max(pausedUntil, now() + ms);
    },
    slowDown() {
      const at = now();
      if (at - changedAt < SLOW_DOWN_QUIET_MS && current < configured) return;
      recover(at);
      current = Math.max(configured * MIN_RATE_SHARE, current / 2);
      changedAt = at;
    },
    rate() {
      recover(now());
      return current;
    },
  };
}
