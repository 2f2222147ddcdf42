import { afterEach, describe, expect, it, vi } from "vitest";
import { createSinkRateLimiter } from "../../src/notify/sink-rate-limiter.js";

/**
 * The limiter on fake timers and a fake monotonic clock: what it guarantees (starts at least
 * 1/rate apart, a pause holding every caller) is checked exactly, with no wall clock to race.
 */
afterEach(() => vi.useRealTimers());

async function startsOf(callers: number, run: (limiter: ReturnType<typeof createSinkRateLimiter>) => void, rate = 20): Promise<number[]> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  const limiter = createSinkRateLimiter(rate);
  const signal = new AbortController().signal;
  const starts: number[] = [];
  const turns = Array.from({ length: callers }, () => limiter.acquire(signal).then(() => void starts.push(performance.now())));
  run(limiter);
  await vi.advanceTimersByTimeAsync(10_000);
  await Promise.all(turns);
  return starts;
}

describe("a sink's rate limiter", () => {
  it("starts each send at least 1/rate after the one before, and no later than needed", async () => {
    const starts = await startsOf(6, () => undefined);
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    expect(starts[0]).toBe(0);
    expect(gaps).toEqual([50, 50, 50, 50, 50]);
  });

  it("holds every caller for a pause (a receiver's Retry-After), then spaces them again", async () => {
    const starts = await startsOf(3, (limiter) => limiter.pause(1_000));
    expect(starts).toEqual([1_000, 1_050, 1_100]);
  });

  it("lets every caller through at once without a rate", async () => {
    const starts = await startsOf(4, () => undefined, 0);
    expect(starts).toEqual([0, 0, 0, 0]);
  });
});
