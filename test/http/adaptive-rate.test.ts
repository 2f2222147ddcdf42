import { describe, expect, it } from "vitest";
import { MIN_RATE_SHARE, RECOVERY_STEP_MS, SLOW_DOWN_QUIET_MS, createRateLimiter } from "../../src/http/rate-limiter.js";

/** The limiter on a fake clock: its sleeps move the clock, so spacing is read, not timed. */
function fakeTime() {
  let now = 0;
  const waits: number[] = [];
  return {
    now: () => now,
    advance: (ms: number) => void (now += ms),
    waits,
    time: {
      now: () => now,
      sleep: async (ms: number) => {
        waits.push(ms);
        now += ms;
      },
    },
  };
}

const signal = new AbortController().signal;

describe("the explorer's rate limiter after per-second refusals", () => {
  it("halves the rate at a refusal, once per burst, down to a floor", async () => {
    const t = fakeTime();
    const limiter = createRateLimiter(8, t.time);
    expect(limiter.rate!()).toBe(8);
    limiter.slowDown!();
    expect(limiter.rate!()).toBe(4);
    // More refusals of the same burst (requests that were in flight) change nothing.
    limiter.slowDown!();
    t.advance(SLOW_DOWN_QUIET_MS - 1);
    limiter.slowDown!();
    expect(limiter.rate!()).toBe(4);
    for (let i = 0; i < 10; i++) {
      t.advance(SLOW_DOWN_QUIET_MS);
      limiter.slowDown!();
    }
    expect(limiter.rate!()).toBe(8 * MIN_RATE_SHARE);
  });

  it("spaces requests at the lowered rate", async () => {
    const t = fakeTime();
    const limiter = createRateLimiter(10, t.time);
    await limiter.acquire(signal);
    limiter.slowDown!();
    await limiter.acquire(signal);
    await limiter.acquire(signal);
    // 100 ms after the first (granted at 10/s), then 200 ms at 5/s.
    expect(t.waits).toEqual([100, 200]);
  });

  it("climbs back by a tenth of the configured rate each quiet step, and no higher", async () => {
    const t = fakeTime();
    const limiter = createRateLimiter(10, t.time);
    limiter.slowDown!();
    expect(limiter.rate!()).toBe(5);
    t.advance(RECOVERY_STEP_MS);
    expect(limiter.rate!()).toBe(6);
    t.advance(2 * RECOVERY_STEP_MS);
    expect(limiter.rate!()).toBe(8);
    t.advance(100 * RECOVERY_STEP_MS);
    expect(limiter.rate!()).toBe(10);
  });

  it("is a no-op without a configured rate", async () => {
    const limiter = createRateLimiter(0);
    limiter.slowDown!();
    expect(limiter.rate!()).toBe(Infinity);
    await limiter.acquire(signal);
  });
});
