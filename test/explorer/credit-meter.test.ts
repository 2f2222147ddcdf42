import { describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createCreditMeter } from "../../src/explorer/credit-meter.js";
import { ExplorerBudgetExhaustedError } from "../../src/explorer/errors.js";

// The meter inside the client (charges per 2xx, nothing for errors, the budget refusing
// before sending, concurrent calls) is tested against the simulator's own credit counter in
// simulator-operations.test.ts and simulator-errors.test.ts.
describe("credit meter", () => {
  const day = (iso: string) => Date.parse(iso);

  it("starts a new day at 00:00 UTC", () => {
    let now = day("2024-05-01T23:59:59.000Z");
    const meter = createCreditMeter(createTestCommon({ now: () => now }), { dailyBudget: 10 });
    meter.reserve("nftTransfers").commit();
    meter.reserve("nftTransfers").commit();
    expect(() => meter.reserve("blockInternalTransactions")).toThrow(ExplorerBudgetExhaustedError);
    now = day("2024-05-02T00:00:00.000Z");
    expect(meter.spentToday()).toBe(0);
    expect(meter.remainingToday()).toBe(10);
    expect(meter.byOperation()).toEqual({});
    meter.reserve("blockInternalTransactions").commit();
    expect(meter.snapshot()).toEqual({ day: "2024-05-02", spent: 1, byOperation: { blockInternalTransactions: 1 } });
  });

  it("snapshot and restore carry the day's spending across a restart", () => {
    let now = day("2024-05-01T10:00:00.000Z");
    const before = createCreditMeter(createTestCommon({ now: () => now }), { dailyBudget: 100 });
    before.reserve("accountInternalTransactions").commit();
    before.reserve("nftTransfers").commit();
    const saved = JSON.parse(JSON.stringify(before.snapshot())) as ReturnType<typeof before.snapshot>;

    const after = createCreditMeter(createTestCommon({ now: () => now }), { dailyBudget: 100 });
    after.restore(saved);
    expect(after.spentToday()).toBe(25);
    expect(after.remainingToday()).toBe(75);
    expect(after.byOperation()).toEqual({ accountInternalTransactions: 20, nftTransfers: 5 });

    now = day("2024-05-02T10:00:00.000Z");
    const nextDay = createCreditMeter(createTestCommon({ now: () => now }), { dailyBudget: 100 });
    nextDay.restore(saved);
    expect(nextDay.spentToday()).toBe(0);
  });

  it("ignores a malformed persisted state", () => {
    const now = day("2024-05-01T10:00:00.000Z");
    const meter = createCreditMeter(createTestCommon({ now: () => now }));
    meter.restore({ day: "2024-05-01", spent: -4, byOperation: {} });
    meter.restore({ day: "2024-05-01", spent: "x" as unknown as number, byOperation: {} });
    expect(meter.spentToday()).toBe(0);
    meter.restore({ day: "2024-05-01", spent: 7, byOperation: { nftItem: 6, nope: 1, nftTransfers: 1.5 } as never });
    expect(meter.spentToday()).toBe(7);
    expect(meter.byOperation()).toEqual({ nftItem: 6 });
  });

  it("a released reservation frees its credits", () => {
    const meter = createCreditMeter(createTestCommon(), { dailyBudget: 5 });
    const held = meter.reserve("nftTransfers");
    expect(() => meter.reserve("blockInternalTransactions")).toThrow(ExplorerBudgetExhaustedError);
    held.release();
    meter.reserve("nftTransfers").commit();
    expect(meter.spentToday()).toBe(5);
  });
});
