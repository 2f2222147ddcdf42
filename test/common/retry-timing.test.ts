import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { jitteredBackoff } from "../../src/common/backoff.js";
import { parseRetryAfter } from "../../src/common/retry-after.js";
import { sleep } from "../../src/common/sleep.js";

/** The retry timing the explorer client and the dispatcher share. */
describe("jitteredBackoff", () => {
  it("is full jitter under min(max, base * 2^retry)", () => {
    expect(jitteredBackoff(3, { baseMs: 100, maxMs: 10_000 }, () => 0.999999)).toBe(799);
    expect(jitteredBackoff(3, { baseMs: 100, maxMs: 10_000 }, () => 0)).toBe(0);
    expect(jitteredBackoff(20, { baseMs: 100, maxMs: 10_000 }, () => 0.5)).toBe(5000);
  });

  it("never exceeds its ceiling nor goes negative", () => {
    fc.assert(
      fc.property(fc.integer({ min: -3, max: 60 }), fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 1_000_000 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (retry, baseMs, maxMs, r) => {
        const delay = jitteredBackoff(retry, { baseMs, maxMs }, () => r);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(Math.min(maxMs, baseMs * 2 ** Math.max(0, retry)));
      }),
    );
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2024-06-01T12:00:00Z");
  it("reads delta seconds, whole or fractional", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("1.5", now)).toBe(1500);
    expect(parseRetryAfter(["7", "9"], now)).toBe(7000);
  });
  it("reads an HTTP date, never returning a negative wait", () => {
    expect(parseRetryAfter("Sat, 01 Jun 2024 12:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sat, 01 Jun 2024 11:00:00 GMT", now)).toBe(0);
  });
  it("ignores what it cannot read", () => {
    for (const value of ["soon", "-5", "1e3", "", "   ", undefined]) expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe("sleep", () => {
  it("rejects with the signal's own reason when aborted", async () => {
    const controller = new AbortController();
    const reason = new Error("stopping");
    const waiting = sleep(60_000, controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(sleep(10, controller.signal)).rejects.toBe(reason);
  });
});
