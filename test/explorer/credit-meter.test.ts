import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { createCreditMeter } from "../../src/explorer/credit-meter.js";
import { ExplorerBudgetExhaustedError } from "../../src/explorer/errors.js";
import { OPERATIONS } from "../../src/explorer/operations.js";
import { startFixtureServer, type FixtureServer } from "./fixture-server.js";
import * as s from "./samples.js";

let server: FixtureServer;
let client: ExplorerClient | undefined;

beforeEach(async () => {
  server = await startFixtureServer();
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  await server.close();
});

describe("credit meter in the client", () => {
  it("charges each operation's cost from the spec for every 2xx answer, nothing for errors", async () => {
    const common = createTestCommon();
    client = createExplorerClient(common, { baseUrl: server.url, requestsPerSecond: 1000, retryBaseMs: 1 });
    server.setDefault(() => ({ body: s.list(s.internalTransactionListItem) }));
    await client.accountInternalTransactions({ accountAddress: s.ADDR_A }); // 20
    await client.blockInternalTransactions({ blockNumber: 1 }); // 1
    await client.blockInternalTransactions({ blockNumber: 2 }); // 1
    server.enqueue({ body: s.list(s.nftTransfer) }, { status: 429, body: { code: "API_REQUEST_QUOTA_EXCEEDED" } }, { body: s.list(s.nftTransfer) });
    await client.nftTransfers({ tokenAddress: s.TOKEN }); // 5
    await client.nftTransfers({ tokenAddress: s.TOKEN }); // 429 (free), then 5
    server.enqueue({ status: 404, body: { code: "NOT_FOUND_TRANSACTION" } });
    await expect(client.transactionInternalTransactions({ transactionHash: s.TX })).rejects.toThrow(/404/);

    expect(client.meter.byOperation()).toEqual({ accountInternalTransactions: 20, blockInternalTransactions: 2, nftTransfers: 10 });
    expect(client.meter.spentToday()).toBe(32);
    expect(client.meter.remainingToday()).toBe(Infinity);
    const credits = await common.metrics.explorerCredits.get();
    expect(Object.fromEntries(credits.values.map((v) => [v.labels.operation, v.value]))).toEqual({ accountInternalTransactions: 20, blockInternalTransactions: 2, nftTransfers: 10 });
    expect((await common.metrics.explorerCreditsToday.get()).values[0]!.value).toBe(32);
  });

  it("a 2xx answer with a bad body is still charged (the explorer charged it)", async () => {
    client = createExplorerClient(createTestCommon(), { baseUrl: server.url, requestsPerSecond: 1000 });
    server.enqueue({ body: "{" });
    await expect(client.accountEventLogs({ accountAddress: s.TOKEN })).rejects.toThrow(/unexpected response/);
    expect(client.meter.spentToday()).toBe(OPERATIONS.accountEventLogs.cost);
  });

  it("refuses a call that does not fit in the budget before sending it, and does not retry it", async () => {
    const common = createTestCommon();
    client = createExplorerClient(common, { baseUrl: server.url, requestsPerSecond: 1000, dailyCreditBudget: 25 });
    expect((await common.metrics.explorerCreditBudget.get()).values[0]!.value).toBe(25);
    server.setDefault((request) => ({ body: request.path.endsWith("/nft-transfers") ? s.list(s.nftTransfer) : s.list(s.internalTransactionListItem) }));
    await client.accountInternalTransactions({ accountAddress: s.ADDR_A }); // 20, 5 left
    await client.accountNftTransfers({ accountAddress: s.ADDR_A }); // 3, 2 left
    const error = (await client.accountNftTransfers({ accountAddress: s.ADDR_A }).catch((e: unknown) => e)) as ExplorerBudgetExhaustedError;
    expect(error).toBeInstanceOf(ExplorerBudgetExhaustedError);
    expect(error.code).toBe("KW_EXPLORER_BUDGET_EXHAUSTED");
    expect(error.remaining).toBe(2);
    expect(server.requests).toHaveLength(2);
    await client.blockInternalTransactions({ blockNumber: 1 }); // 1 still fits
    await client.blockInternalTransactions({ blockNumber: 1 }); // and the last one
    await expect(client.blockInternalTransactions({ blockNumber: 1 })).rejects.toBeInstanceOf(ExplorerBudgetExhaustedError);
    expect(server.requests).toHaveLength(4);
    expect(client.meter.remainingToday()).toBe(0);
  });

  it("concurrent calls cannot together overshoot the budget", async () => {
    client = createExplorerClient(createTestCommon(), { baseUrl: server.url, requestsPerSecond: 1000, dailyCreditBudget: 10 });
    server.setDefault({ body: s.list(s.eventLog), delayMs: 50 });
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => client!.accountEventLogs({ accountAddress: s.TOKEN })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    expect(server.requests).toHaveLength(3);
    expect(client.meter.spentToday()).toBe(9);
  });
});

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
