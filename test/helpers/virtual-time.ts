import type { RateLimiterTime } from "../../src/http/rate-limiter.js";

/**
 * A rate limiter's time that never waits on the machine's timers: a sleep resolves at once
 * and moves the clock to the moment it would have woken (never backwards, as sleepers
 * overlap). `wakes` lists those moments, so a test reads the spacing the limiter imposed
 * exactly, whatever the load of the machine.
 */
export interface VirtualTime extends Required<RateLimiterTime> {
  readonly wakes: number[];
  /** Time passes without anyone sleeping (a pause between calls). */
  advance(ms: number): void;
}

export function virtualTime(start = 0): VirtualTime {
  let now = start;
  const wakes: number[] = [];
  return {
    wakes,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    async sleep(ms, signal) {
      signal.throwIfAborted();
      const wake = now + ms;
      wakes.push(wake);
      now = Math.max(now, wake);
    },
  };
}

/** A rate limiter's time whose sleeps never end unless aborted: for tests of cancelling a wait. */
export function stalledTime(onSleep: () => void): Required<RateLimiterTime> {
  return {
    now: () => 0,
    sleep: (_ms, signal) =>
      new Promise<void>((_resolve, reject) => {
        signal.throwIfAborted();
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        onSleep();
      }),
  };
}
