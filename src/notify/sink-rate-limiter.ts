import { sleep } from "../common/sleep.js";

export interface SinkRateLimiter {
  /** Resolves when the caller may start a send; rejects with the signal's reason if aborted first. */
  acquire(signal: AbortSignal): Promise<void>;
  /** No send starts before `ms` from now (the receiver's Retry-After applies to the whole sink). */
  pause(ms: number): void;
}

/**
 * Spaces the starts of a sink's sends at least 1/ratePerSecond apart (Slack accepts one
 * message a second per webhook). Callers take turns, and each turn is measured from the
 * moment the previous one actually began, not from a reserved slot: a late timer then makes
 * the next send later too, never closer. Monotonic clock: a wall-clock jump must neither
 * stall a sink nor let a burst through.
 */
export function createSinkRateLimiter(ratePerSecond: number | undefined, clock: () => number = () => performance.now()): SinkRateLimiter {
  const interval = ratePerSecond !== undefined && ratePerSecond > 0 && Number.isFinite(ratePerSecond) ? 1000 / ratePerSecond : 0;
  let lastStart = -Infinity;
  let pausedUntil = -Infinity;
  let tail: Promise<void> = Promise.resolve();
  return {
    acquire(signal) {
      const turn = tail.then(async () => {
        // Re-checked after every sleep: a pause may arrive while waiting.
        for (;;) {
          signal.throwIfAborted();
          const wait = Math.max(lastStart + interval, pausedUntil) - clock();
          if (wait <= 0) break;
          await sleep(wait, signal);
        }
        lastStart = clock();
      });
      tail = turn.catch(() => undefined);
      return turn;
    },
    pause(ms) {
      pausedUntil = Math.max(pausedUntil, clock() + ms);
    },
  };
}
