import { describe, expect, it } from "vitest";
import { utcDay } from "../../src/explorer/credit-meter.js";
import { createCreditHistory } from "../../src/status/credit-history.js";

/** The ring behind the page's credit chart, on a clock the test moves. */
function setup(options: { capacity?: number; minSpacingMs?: number } = {}) {
  let time = Date.UTC(2026, 0, 10, 23, 0, 0);
  let spent = 0;
  const history = createCreditHistory({ read: () => ({ day: utcDay(time), spent }), now: () => time, ...options });
  return {
    history,
    advance(ms: number, credits = 0) {
      time += ms;
      spent = utcDay(time) === utcDay(time - ms) ? spent + credits : credits;
    },
  };
}

describe("credit history", () => {
  it("keeps readings of the day in order, ending with one taken now", () => {
    const { history, advance } = setup({ minSpacingMs: 10_000 });
    history.sample();
    advance(60_000, 30);
    history.sample();
    advance(5_000, 3); // too close to the last reading: skipped unless forced
    history.sample();
    advance(1_000, 2);
    expect(history.today().map((s) => s.spent)).toEqual([0, 30, 35]);
    expect(history.today().at(-1)!.at).toBe(new Date(Date.UTC(2026, 0, 10, 23, 1, 6)).toISOString());
    history.sample(true);
    expect(history.today().map((s) => s.spent)).toEqual([0, 30, 35, 35]);
  });

  it("starts again when the UTC day turns, and keeps at most its capacity", () => {
    const { history, advance } = setup({ capacity: 3, minSpacingMs: 0 });
    for (let i = 0; i < 5; i++) {
      advance(60_000, 10);
      history.sample();
    }
    expect(history.today().map((s) => s.spent)).toEqual([30, 40, 50, 50]);
    advance(3600_000, 7); // past midnight: the meter starts from zero, so does the series
    expect(history.today().map((s) => s.spent)).toEqual([7]);
    history.sample();
    advance(60_000, 1);
    expect(history.today().map((s) => s.spent)).toEqual([7, 8]);
    expect(history.today().every((s) => s.at.startsWith("2026-01-11"))).toBe(true);
  });
});
