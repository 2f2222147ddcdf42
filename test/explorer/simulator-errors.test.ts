/**
 * The client against the simulator's faults and errors: what is retried (and then equals the
 * fault-free answer), what is reported at once, and how 429s of the rate limit and of the
 * daily quota are honoured. Every count is read back from the simulator's own counters.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon, type Common } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient, type ExplorerClientOptions } from "../../src/explorer/client.js";
import { ExplorerBadResponseError, ExplorerBudgetExhaustedError, ExplorerHttpError } from "../../src/explorer/errors.js";
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

  it("429 past the per-second rate: waits the Retry-After, then succeeds", async () => {
    const sim = await start({ seed: 22, requestsPerSecond: 2 });
    const common = createTestCommon();
    // Six calls at once against 2 requests/s. Without honouring Retry-After, retries 1 ms
    // apart would all meet the same 429 and run out.
    const client = connect(sim, { maxRetries: 4, retryMaxMs: 5000 }, common);
    const blocks = Array.from({ length: 6 }, (_, i) => RANGE.from + i);
    const started = performance.now();
    const pages = await Promise.all(blocks.map((blockNumber) => client.blockInternalTransactions({ blockNumber, size: 2000 })));
    const elapsed = performance.now() - started;
    pages.forEach((page, i) => expect(page.results.sort(byCallPosition)).toEqual(sim.truth.blockInternalTransactions(blocks[i]!)));
    const stats = sim.stats();
    expect(stats.faults.rateLimit).toBeGreaterThan(0);
    expect(requestsOf(stats, "blockInternalTransactions")).toEqual({ "200": 6, "429": stats.faults.rateLimit });
    expect(await metricValue(common.metrics.explorerRetries)).toBe(stats.faults.rateLimit);
    // The simulator asks for at least one second.
    expect(elapsed).toBeGreaterThanOrEqual(900);
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
      expect(bad.code).toBe("KW_EXPLORER_BAD_RESPONSE");
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
    expect(error.apiMessage).toBe("totalPage is over.");
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
  it("429 of the daily quota: the typed error carries retryAfterMs until UTC midnight, without a retry or a charge", async () => {
    let now = Date.UTC(2025, 5, 1, 12, 0, 0);
    const sim = await start({ seed: 27, dailyCreditQuota: 25, now: () => now });
    const client = connect(sim, { maxRetries: 5, retryMaxMs: 30_000 });
    const a = sim.addresses;
    await client.accountInternalTransactions({ accountAddress: a.busyWallet }); // 20
    await client.accountEventLogs({ accountAddress: a.busyToken }); // 3 → 23
    const error = (await client.nftTransfers({ tokenAddress: a.busyCollection }).catch((e: unknown) => e)) as ExplorerHttpError; // 5 would make 28
    expect(error).toBeInstanceOf(ExplorerHttpError);
    expect(error.status).toBe(429);
    expect(error.apiCode).toBe("API_REQUEST_QUOTA_EXCEEDED");
    expect(error.retryAfterMs).toBe(12 * 3600 * 1000);
    expect(requestsOf(sim.stats(), "nftTransfers")).toEqual({ "429": 1 });
    expect(sim.stats().faults.quota).toBe(1);
    await client.blockInternalTransactions({ blockNumber: RANGE.from }); // 1 → 24 still fits
    expect(client.meter.byOperation()).toEqual(sim.stats().credits);
    expect(client.meter.spentToday()).toBe(24);

    now += 12 * 3600 * 1000; // the next UTC day
    await client.nftTransfers({ tokenAddress: a.busyCollection });
    expect(requestsOf(sim.stats(), "nftTransfers")).toEqual({ "429": 1, "200": 1 });
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
