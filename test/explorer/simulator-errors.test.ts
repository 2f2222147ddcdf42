/**
 * The client against the simulator's faults and errors: what is retried (and then equals the
 * fault-free answer), what is reported at once, and how 429s of the rate limit and of the
 * daily quota are honoured. Every count is read back from the simulator's own counters.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon, type Common } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient, type ExplorerClientOptions } from "../../src/explorer/client.js";
import { ExplorerBadResponseError, ExplorerBudgetExhaustedError, ExplorerDailyQuotaError, ExplorerHttpError, ExplorerPlanError } from "../../src/explorer/errors.js";
import { OPERATIONS } from "../../src/explorer/operations.js";
import { createSimulator, type Simulator, type SimulatorOptions } from "../../src/simulator/index.js";
import { START_BLOCK, byCallPosition, collect, metricValue, requestsOf } from "./simulator-support.js";

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function start(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await createSimulator({ initialBlocks: 60, ...options });
  opened.push(sim);
  return sim;
}

function connect(sim: Simulator, options: Partial<ExplorerClientOptions> = {}, common: Common = createTestCommon()): ExplorerClient {
  const client = createExplorerClient(common, { baseUrl: sim.url, requestsPerSecond: 1000, retryBaseMs: 1, retryMaxMs: 20, ...options });
  opened.push(client);
  return client;
}

const RANGE = { from: START_BLOCK + 10, to: START_BLOCK + 49 };
const RANGE_PARAMS = { blockNumberStart: RANGE.from, blockNumberEnd: RANGE.to };
const UNKNOWN_TX = `0x${"ab".repeat(32)}`;

/** Calls `call` until it resolves, as the poller's next tick would; returns the result and the errors met on the way. */
async function untilAnswered<T>(call: () => Promise<T>, attempts = 20): Promise<{ result: T; errors: unknown[] }> {
  const errors: unknown[] = [];
  for (let i = 0; i < attempts; i++) {
    try {
      return { result: await call(), errors };
    } catch (error) {
      errors.push(error);
    }
  }
  throw new Error(`no answer after ${attempts} attempts: ${String(errors.at(-1))}`);
}

describe("faults the client retries", () => {
  it("500, 502 (HTML) and 503 answers and dropped connections: every call succeeds with the fault-free result", async () => {
    const sim = await start({ seed: 21, faults: { serverErrorRate: 0.3, resetRate: 0.15 } });
    const common = createTestCommon();
    const client = connect(sim, { maxRetries: 10 }, common);
    const wallet = sim.addresses.busyWallet;

    const calls = await collect(client.paginate("accountInternalTransactions", { accountAddress: wallet, ...RANGE_PARAMS, size: 20 }));
    expect(calls.sort(byCallPosition)).toEqual(sim.truth.accountInternalTransactions(wallet, RANGE));
    const token = sim.addresses.busyToken;
    const logs = await collect(client.paginate("accountEventLogs", { accountAddress: token, ...RANGE_PARAMS, size: 30 }));
    expect(logs.reverse()).toEqual(sim.truth.accountEventLogs(token, RANGE));
    for (let block = RANGE.from; block < RANGE.from + 10; block++) {
      const page = await client.blockInternalTransactions({ blockNumber: block, size: 2000 });
      expect(page.results.sort(byCallPosition)).toEqual(sim.truth.blockInternalTransactions(block));
    }

    const stats = sim.stats();
    const answered = (status: string) => Object.values(stats.requests).reduce((n, byStatus) => n + (byStatus[status] ?? 0), 0);
    for (const status of ["500", "502", "503"]) expect(answered(status), status).toBeGreaterThan(0);
    expect(stats.faults.reset).toBeGreaterThan(0);
    const faults = (stats.faults.serverError ?? 0) + (stats.faults.reset ?? 0);
    // Each fault cost exactly one retry, and the metrics say which kind.
    expect(await metricValue(common.metrics.explorerRetries)).toBe(faults);
    for (const status of ["500", "502", "503"]) expect(await metricValue(common.metrics.explorerRequests, { status }), status).toBe(answered(status));
    expect(await metricValue(common.metrics.explorerRequests, { status: "KW_EXPLORER_NETWORK" })).toBe(stats.faults.reset);
    // Errors are not charged, by the service or by the meter.
    expect(client.meter.byOperation()).toEqual(stats.credits);
  });

  it("429 type:requestPerSecond (no Retry-After): retried with backoff at a lowered rate, then succeeds", async () => {
    const sim = await start({ seed: 22, requestsPerSecond: 2 });
    const common = createTestCommon();
    // Six calls at once against 2 requests/s, from a client set to twice that: the first
    // refusals halve its rate, and the retries, spaced by it, get through.
    const client = connect(sim, { requestsPerSecond: 4, maxRetries: 8, retryBaseMs: 200, retryMaxMs: 2000 }, common);
    const blocks = Array.from({ length: 6 }, (_, i) => RANGE.from + i);
    const pages = await Promise.all(blocks.map((blockNumber) => client.blockInternalTransactions({ blockNumber, size: 2000 })));
    pages.forEach((page, i) => expect(page.results.sort(byCallPosition)).toEqual(sim.truth.blockInternalTransactions(blocks[i]!)));
    const stats = sim.stats();
    expect(stats.faults.rateLimit).toBeGreaterThan(0);
    expect(requestsOf(stats, "blockInternalTransactions")).toEqual({ "200": 6, "429": stats.faults.rateLimit });
    expect(await metricValue(common.metrics.explorerRetries)).toBe(stats.faults.rateLimit);
    expect(client.requestRate()).toBeLessThan(4);
    expect(await metricValue(common.metrics.explorerRequestRate)).toBeLessThan(4);
    expect(client.meter.spentToday()).toBe(stats.creditsTotal);
  });
});

describe("bad bodies", () => {
  it("a truncated 200 is retried within the call; JSON of the wrong shape is reported at once; both are charged on both sides", async () => {
    const sim = await start({ seed: 23, faults: { truncateRate: 0.25, malformedRate: 0.25 } });
    const client = connect(sim, { maxRetries: 10 });
    const errors: unknown[] = [];
    const blocks = 12;
    for (let block = RANGE.from; block < RANGE.from + blocks; block++) {
      const answer = await untilAnswered(() => client.blockInternalTransactions({ blockNumber: block, size: 2000 }));
      errors.push(...answer.errors);
      expect(answer.result.results.sort(byCallPosition)).toEqual(sim.truth.blockInternalTransactions(block));
    }
    const stats = sim.stats();
    expect(stats.faults.truncate).toBeGreaterThan(0);
    expect(stats.faults.malformed).toBeGreaterThan(0);
    // Only answers that were JSON of the wrong shape reach the caller; cut bodies were retried inside the call.
    expect(errors.length).toBeLessThan(stats.faults.truncate! + stats.faults.malformed!);
    for (const error of errors) {
      expect(error).toBeInstanceOf(ExplorerBadResponseError);
      const bad = error as ExplorerBadResponseError;
      // The wrong-shape body names a field kaiawatch reads: the explorer changed shape.
      expect(bad.code).toBe("KW_EXPLORER_SHAPE_CHANGED");
      expect(bad.transient).toBe(false);
      expect(bad.operation).toBe("blockInternalTransactions");
      expect(bad.excerpt.length).toBeGreaterThan(0);
    }
    const answered = requestsOf(stats, "blockInternalTransactions")["200"]!;
    expect(answered).toBe(blocks + stats.faults.truncate! + stats.faults.malformed!);
    // The service charged every 200, good or bad; so did the meter.
    expect(client.meter.spentToday()).toBe(stats.creditsTotal);
    expect(stats.creditsTotal).toBe(OPERATIONS.blockInternalTransactions.cost * answered);
  });
});

describe("errors the client reports at once", () => {
  it("401 with a wrong key or none is not retried; the right key is let in", async () => {
    const sim = await start({ seed: 24, apiKey: "the-right-key" });
    for (const apiKey of ["a-wrong-key", undefined]) {
      sim.resetStats();
      const client = connect(sim, { apiKey, maxRetries: 5 });
      const error = (await client.accountEventLogs({ accountAddress: sim.addresses.busyToken }).catch((e: unknown) => e)) as ExplorerHttpError;
      expect(error).toBeInstanceOf(ExplorerHttpError);
      expect(error.status).toBe(401);
      expect(error.apiCode).toBe("UNAUTHORIZED_ACCESS");
      expect(requestsOf(sim.stats(), "accountEventLogs")).toEqual({ "401": 1 });
      expect(client.meter.spentToday()).toBe(0);
    }
    const client = connect(sim, { apiKey: "the-right-key" });
    const page = await client.accountEventLogs({ accountAddress: sim.addresses.busyToken, ...RANGE_PARAMS, size: 2000 });
    expect([...page.results].reverse()).toEqual(sim.truth.accountEventLogs(sim.addresses.busyToken, RANGE));
  });

  it("404 NOT_FOUND_TRANSACTION for the internal transactions of an unknown hash; the other per-transaction lists are empty", async () => {
    const sim = await start({ seed: 25 });
    const client = connect(sim, { maxRetries: 5 });
    const error = (await client.transactionInternalTransactions({ transactionHash: UNKNOWN_TX }).catch((e: unknown) => e)) as ExplorerHttpError;
    expect(error).toBeInstanceOf(ExplorerHttpError);
    expect(error.status).toBe(404);
    expect(error.apiCode).toBe("NOT_FOUND_TRANSACTION");
    expect(requestsOf(sim.stats(), "transactionInternalTransactions")).toEqual({ "404": 1 });
    expect(client.meter.spentToday()).toBe(0);

    expect((await client.transactionEventLogs({ transactionHash: UNKNOWN_TX })).results).toEqual([]);
    expect((await client.transactionNftTransfers({ transactionHash: UNKNOWN_TX })).results).toEqual([]);
    // A known hash answers.
    const known = sim.truth.blockInternalTransactions(RANGE.from)[0]!.transaction_hash!;
    expect((await client.transactionInternalTransactions({ transactionHash: known })).results.length).toBeGreaterThan(0);
  });

  it('a page past the last is a 400 "totalPage is over." to a call, and the quiet end of paginate()', async () => {
    const sim = await start({ seed: 26 });
    const client = connect(sim, { maxRetries: 5 });
    const token = sim.addresses.busyToken;
    const total = sim.truth.accountEventLogs(token, RANGE).length;
    const past = Math.ceil(total / 20) + 1;
    const error = (await client.accountEventLogs({ accountAddress: token, ...RANGE_PARAMS, page: past }).catch((e: unknown) => e)) as ExplorerHttpError;
    expect(error).toBeInstanceOf(ExplorerHttpError);
    expect(error.status).toBe(400);
    expect(error.apiCode).toBe("INVALID_REQUEST");
    expect(error.apiMessage).toBe("Requested parameter is not valid. (totalPage is over.)");
    expect(requestsOf(sim.stats(), "accountEventLogs")).toEqual({ "400": 1 });

    sim.resetStats();
    expect(await collect(client.paginate("accountEventLogs", { accountAddress: token, ...RANGE_PARAMS, page: past }))).toEqual([]);
    expect(requestsOf(sim.stats(), "accountEventLogs")).toEqual({ "400": 1 });
    // The last page itself is still served.
    const last = await collect(client.paginate("accountEventLogs", { accountAddress: token, ...RANGE_PARAMS, page: past - 1 }));
    expect(last).toHaveLength(total - (past - 2) * 20);
  });
});

describe("credits: the service's daily quota and the client's own budget", () => {
  it("429 type:requestPerDay: nothing is sent until the next ask (within the hour, or at 00:00 UTC), nothing retried or charged; a success clears it", async () => {
    let now = Date.UTC(2025, 5, 1, 12, 0, 0);
    const sim = await start({ seed: 27, dailyCreditQuota: 25, now: () => now });
    const common = createTestCommon({ now: () => now });
    const client = connect(sim, { maxRetries: 5, retryMaxMs: 30_000 }, common);
    const a = sim.addresses;
    await client.accountInternalTransactions({ accountAddress: a.busyWallet }); // 20
    await client.accountEventLogs({ accountAddress: a.busyToken }); // 3 → 23
    const error = (await client.nftTransfers({ tokenAddress: a.busyCollection }).catch((e: unknown) => e)) as ExplorerDailyQuotaError; // 5 would make 28
    expect(error).toBeInstanceOf(ExplorerDailyQuotaError);
    expect(error.code).toBe("KW_EXPLORER_DAILY_QUOTA");
    expect(error.limit).toBe(25);
    expect(error.retryAt).toBe("2025-06-01T13:00:00.000Z");
    expect(requestsOf(sim.stats(), "nftTransfers")).toEqual({ "429": 1 });
    expect(client.meter.quota()).toEqual({ limit: 25, since: "2025-06-01T12:00:00.000Z", retry_at: "2025-06-01T13:00:00.000Z" });

    // Until then nothing reaches the explorer, not even a call that would fit.
    const held = (await client.blockInternalTransactions({ blockNumber: RANGE.from }).catch((e: unknown) => e)) as ExplorerDailyQuotaError;
    expect(held).toBeInstanceOf(ExplorerDailyQuotaError);
    expect(held.message).toContain("not sent");
    expect(requestsOf(sim.stats(), "blockInternalTransactions")).toEqual({});
    expect(client.meter.spentToday()).toBe(23);

    // An hour later one request asks again; still spent, so the next ask is at 00:00 UTC at the latest.
    now += 3600 * 1000;
    await expect(client.nftTransfers({ tokenAddress: a.busyCollection })).rejects.toBeInstanceOf(ExplorerDailyQuotaError);
    expect(requestsOf(sim.stats(), "nftTransfers")).toEqual({ "429": 2 });
    expect(client.meter.quota()?.retry_at).toBe("2025-06-01T14:00:00.000Z");
    now = Date.UTC(2025, 5, 1, 23, 30, 0); // the ask after this one is at midnight, half an hour away
    await expect(client.nftTransfers({ tokenAddress: a.busyCollection })).rejects.toBeInstanceOf(ExplorerDailyQuotaError);
    expect(requestsOf(sim.stats(), "nftTransfers")).toEqual({ "429": 3 });
    expect(client.meter.quota()?.retry_at).toBe("2025-06-02T00:00:00.000Z");
    expect(client.meter.quota()?.since).toBe("2025-06-01T12:00:00.000Z");

    now = Date.UTC(2025, 5, 2, 0, 0, 1); // the simulator's day has turned
    await client.nftTransfers({ tokenAddress: a.busyCollection });
    expect(requestsOf(sim.stats(), "nftTransfers")).toEqual({ "429": 3, "200": 1 });
    expect(client.meter.quota()).toBeUndefined();
  });

  it("403 of an operation outside the key's plan: KW_EXPLORER_PLAN naming the plan it needs, not retried", async () => {
    const sim = await start({ seed: 30, apiKey: "free-key", plan: "FREE" });
    const client = connect(sim, { apiKey: "free-key", maxRetries: 5 });
    const error = (await client.accountInternalTransactions({ accountAddress: sim.addresses.busyWallet }).catch((e: unknown) => e)) as ExplorerPlanError;
    expect(error).toBeInstanceOf(ExplorerPlanError);
    expect(error.code).toBe("KW_EXPLORER_PLAN");
    expect(error.needs).toBe("PRO_PLUS");
    expect(error.message).toContain("needs the PRO_PLUS plan");
    expect(requestsOf(sim.stats(), "accountInternalTransactions")).toEqual({ "403": 1 });
    // The operations of the plan answer.
    expect((await client.blockInternalTransactions({ blockNumber: RANGE.from })).results.length).toBeGreaterThanOrEqual(0);
  });

  it("the client's daily budget refuses a call that does not fit before sending it", async () => {
    const sim = await start({ seed: 28 });
    const client = connect(sim, { dailyCreditBudget: 25 });
    const a = sim.addresses;
    await client.accountInternalTransactions({ accountAddress: a.busyWallet }); // 20, 5 left
    await client.accountNftTransfers({ accountAddress: a.busyWallet }); // 3, 2 left
    const error = (await client.accountNftTransfers({ accountAddress: a.busyWallet }).catch((e: unknown) => e)) as ExplorerBudgetExhaustedError;
    expect(error).toBeInstanceOf(ExplorerBudgetExhaustedError);
    expect(error.code).toBe("KW_EXPLORER_BUDGET_EXHAUSTED");
    expect(error.remaining).toBe(2);
    expect(requestsOf(sim.stats(), "accountNftTransfers")).toEqual({ "200": 1 });
    await client.blockInternalTransactions({ blockNumber: RANGE.from }); // 1 still fits
    await client.blockInternalTransactions({ blockNumber: RANGE.from }); // and the last one
    await expect(client.blockInternalTransactions({ blockNumber: RANGE.from })).rejects.toBeInstanceOf(ExplorerBudgetExhaustedError);
    expect(requestsOf(sim.stats(), "blockInternalTransactions")).toEqual({ "200": 2 });
    expect(client.meter.remainingToday()).toBe(0);
    expect(client.meter.spentToday()).toBe(sim.stats().creditsTotal);
  });

  it("concurrent calls cannot together overshoot the budget", async () => {
    // The latency keeps the five calls in flight together.
    const sim = await start({ seed: 29, faults: { latencyMs: 50 } });
    const client = connect(sim, { dailyCreditBudget: 10 });
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => client.accountEventLogs({ accountAddress: sim.addresses.busyToken })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    expect(results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason)).toEqual([expect.any(ExplorerBudgetExhaustedError), expect.any(ExplorerBudgetExhaustedError)]);
    expect(requestsOf(sim.stats(), "accountEventLogs")).toEqual({ "200": 3 });
    expect(client.meter.spentToday()).toBe(9);
    expect(sim.stats().creditsTotal).toBe(9);
  });
});
