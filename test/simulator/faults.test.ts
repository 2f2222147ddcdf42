import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/explorer/operations.js";
import type { EventLog, ListResponse } from "../../src/explorer/types.js";
import type { SimulatorOptions } from "../../src/simulator/index.js";
import { get, ok, rpc } from "./http.js";
import { errorBody, pathOf } from "./spec-schemas.js";
import { startSimulator } from "./start.js";

const start = (options: SimulatorOptions) => startSimulator({ initialBlocks: 20, ...options });

/** A clock the test moves by hand, so rate and quota tests do not depend on the machine's speed. */
function manualClock(startMs = Date.UTC(2025, 5, 1, 12, 0, 0)) {
  let t = startMs;
  return { now: () => t, advance: (ms: number) => (t += ms), set: (ms: number) => (t = ms) };
}

describe("authentication", () => {
  it("requires the bearer token when an API key is set; JSON-RPC stays open", async () => {
    const s = await start({ seed: 2, apiKey: "sim-secret-key" });
    const path = pathOf("blockInternalTransactions", { blockNumber: s.head() });
    for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: "sim-secret-key" }] as Record<string, string>[]) {
      const answer = await get(s.url, path, {}, headers);
      expect(answer.status).toBe(401);
      expect(errorBody.parse(answer.json).code).toBe("UNAUTHORIZED_ACCESS");
    }
    expect((await get(s.url, path, {}, { authorization: "Bearer sim-secret-key" })).status).toBe(200);
    expect(await rpc(s.rpcUrl, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber" })).toMatchObject({ result: `0x${s.head().toString(16)}` });
    const stats = s.stats();
    expect(stats.faults.unauthorized).toBe(3);
    expect(stats.requests.blockInternalTransactions).toEqual({ "401": 3, "200": 1 });
    expect(stats.creditsTotal).toBe(OPERATIONS.blockInternalTransactions.cost);
    s.setFaults({ apiKey: undefined });
    expect((await get(s.url, path)).status).toBe(200);
  });
});

describe("rate limit and daily quota", () => {
  it("answers 429 API_REQUEST_QUOTA_EXCEEDED type:requestPerSecond, without Retry-After, past the per-second rate", async () => {
    const clock = manualClock();
    const s = await start({ seed: 3, requestsPerSecond: 2, now: clock.now });
    const path = pathOf("accountEventLogs", { accountAddress: s.addresses.busyToken });
    expect((await get(s.url, path)).status).toBe(200);
    expect((await get(s.url, path)).status).toBe(200);
    const limited = await get(s.url, path);
    expect(limited.status).toBe(429);
    // klaytn/finder-api OpenApiRequestRateLimiter and ApplicationErrorType, word for word.
    expect(errorBody.parse(limited.json)).toEqual({ code: "API_REQUEST_QUOTA_EXCEEDED", title: "request limited", message: "Request quota exceeded. (type:requestPerSecond, quotas:2)" });
    expect(limited.headers.get("retry-after")).toBeNull();
    clock.advance(1000);
    expect((await get(s.url, path)).status).toBe(200);
    const stats = s.stats();
    expect(stats.faults.rateLimit).toBe(1);
    expect(stats.credits.accountEventLogs).toBe(3 * OPERATIONS.accountEventLogs.cost);
  });

  it("charges the spec's costs on 2xx only and refuses what would pass the daily quota until the next UTC day", async () => {
    const clock = manualClock(Date.UTC(2025, 5, 1, 23, 0, 0));
    const s = await start({ seed: 4, dailyCreditQuota: 25, now: clock.now });
    const a = s.addresses;
    await ok(s.url, pathOf("accountInternalTransactions", { accountAddress: a.busyWallet })); // 20
    expect((await get(s.url, pathOf("accountEventLogs", { accountAddress: "0xbad" }))).status).toBe(400); // not charged
    expect((await get(s.url, pathOf("transactionInternalTransactions", { transactionHash: `0x${"1".repeat(64)}` }))).status).toBe(404); // not charged
    await ok(s.url, pathOf("accountEventLogs", { accountAddress: a.busyToken })); // 3 → 23
    const refused = await get(s.url, pathOf("nftTransfers", { tokenAddress: a.busyCollection })); // 5 would make 28
    expect(refused.status).toBe(429);
    expect(errorBody.parse(refused.json)).toEqual({ code: "API_REQUEST_QUOTA_EXCEEDED", title: "request limited", message: "Request quota exceeded. (type:requestPerDay, quotas:25)" });
    expect(refused.headers.get("retry-after")).toBeNull();
    await ok(s.url, pathOf("blockInternalTransactions", { blockNumber: s.head() })); // 1 → 24 still fits
    let stats = s.stats();
    expect(stats.credits).toEqual({ accountInternalTransactions: 20, accountEventLogs: 3, blockInternalTransactions: 1 });
    expect(stats.creditsTotal).toBe(24);
    expect(stats.creditsToday).toBe(24);
    expect(stats.faults.quota).toBe(1);
    clock.advance(3600 * 1000);
    await ok(s.url, pathOf("nftTransfers", { tokenAddress: a.busyCollection }));
    stats = s.stats();
    expect(stats.creditsToday).toBe(5);
    expect(stats.creditsTotal).toBe(29);
  });
});

describe("indexing lag", () => {
  it("serves only blocks <= head - lag while JSON-RPC reports the true head", async () => {
    const s = await start({ seed: 5, indexingLagBlocks: 4 });
    const head = s.head();
    expect(await rpc(s.rpcUrl, { jsonrpc: "2.0", id: 7, method: "kaia_blockNumber" })).toEqual({ jsonrpc: "2.0", id: 7, result: `0x${head.toString(16)}` });
    const calls = await ok<ListResponse<{ block_id: number }>>(s.url, pathOf("accountInternalTransactions", { accountAddress: s.addresses.busyWallet }), { size: 2000 });
    expect(Math.max(...calls.results.map((r) => r.block_id))).toBeLessThanOrEqual(head - 4);
    expect(calls.paging.total_count).toBe(s.truth.accountInternalTransactions(s.addresses.busyWallet, { from: 0, to: head - 4 }).length);
    expect((await ok<ListResponse<unknown>>(s.url, pathOf("blockInternalTransactions", { blockNumber: head }))).results).toEqual([]);
    const tx = s.truth.blockTransactions(head).find((t) => s.truth.blockInternalTransactions(head).some((c) => c.transaction_hash === t.hash));
    expect(tx).toBeDefined();
    expect((await get(s.url, pathOf("transactionInternalTransactions", { transactionHash: tx!.hash }))).status).toBe(404);
    s.setFaults({ indexingLagBlocks: 0 });
    expect((await ok<ListResponse<unknown>>(s.url, pathOf("blockInternalTransactions", { blockNumber: head }))).results.length).toBeGreaterThan(0);
    expect((await get(s.url, pathOf("transactionInternalTransactions", { transactionHash: tx!.hash }))).status).toBe(200);
  });
});

describe("injected faults", () => {
  it("server errors: 500, 502 (an HTML gateway page) and 503, counted and never charged", async () => {
    const s = await start({ seed: 6, faults: { serverErrorRate: 1 } });
    const path = pathOf("accountEventLogs", { accountAddress: s.addresses.busyToken });
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const answer = await get(s.url, path);
      statuses.add(answer.status);
      if (answer.status === 502) expect(answer.headers.get("content-type")).toContain("text/html");
      else expect(errorBody.parse(answer.json).code).toMatch(/^(INTERNAL_SERVER_ERROR|SERVICE_UNAVAILABLE)$/);
    }
    expect([...statuses].sort()).toEqual([500, 502, 503]);
    const stats = s.stats();
    expect(stats.faults.serverError).toBe(30);
    expect(stats.creditsTotal).toBe(0);
    s.setFaults({ serverErrorRate: 0 });
    expect((await get(s.url, path)).status).toBe(200);
  });

  it("maintenance: 503 MAINTENANCE for every API request", async () => {
    const s = await start({ seed: 6 });
    s.setFaults({ maintenance: true });
    const answer = await get(s.url, pathOf("blockInternalTransactions", { blockNumber: s.head() }));
    expect(answer.status).toBe(503);
    expect(errorBody.parse(answer.json).code).toBe("MAINTENANCE");
    expect(s.stats().faults.maintenance).toBe(1);
  });

  it("connection resets: no answer at all, counted, not charged", async () => {
    const s = await start({ seed: 7, faults: { resetRate: 1 } });
    const path = pathOf("accountEventLogs", { accountAddress: s.addresses.busyToken });
    await expect(fetch(new URL(path, s.url))).rejects.toThrow();
    await expect(fetch(new URL(path, s.url))).rejects.toThrow();
    const stats = s.stats();
    expect(stats.faults.reset).toBe(2);
    expect(stats.requests.accountEventLogs).toEqual({ reset: 2 });
    expect(stats.creditsTotal).toBe(0);
  });

  it("truncated JSON: a 200 whose body is a cut-short prefix of the real answer", async () => {
    const s = await start({ seed: 8, faults: { truncateRate: 1 } });
    const path = pathOf("accountEventLogs", { accountAddress: s.addresses.busyToken });
    const cut = await get(s.url, path);
    s.setFaults({ truncateRate: 0 });
    const whole = await get(s.url, path);
    expect(cut.status).toBe(200);
    expect(cut.json).toBeUndefined();
    expect(cut.text.length).toBeLessThan(whole.text.length);
    expect(whole.text.startsWith(cut.text)).toBe(true);
    expect(s.stats().faults.truncate).toBe(1);
  });

  it("malformed bodies: a 200 that is not JSON, or JSON of the wrong shape", async () => {
    const s = await start({ seed: 9, faults: { malformedRate: 1 } });
    const path = pathOf("accountEventLogs", { accountAddress: s.addresses.busyToken });
    let notJson = 0;
    let wrongShape = 0;
    for (let i = 0; i < 20; i++) {
      const answer = await get(s.url, path);
      expect(answer.status).toBe(200);
      if (answer.json === undefined) notJson++;
      else if (!Array.isArray((answer.json as { results?: unknown }).results)) wrongShape++;
    }
    expect(notJson + wrongShape).toBe(20);
    expect(notJson).toBeGreaterThan(0);
    expect(wrongShape).toBeGreaterThan(0);
    expect(s.stats().faults.malformed).toBe(20);
  });

  it("latency: every answer is delayed, and counted", async () => {
    const s = await start({ seed: 10, faults: { latencyMs: 150 } });
    const started = performance.now();
    await ok(s.url, pathOf("blockInternalTransactions", { blockNumber: s.head() }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(s.stats().faults.latency).toBe(1);
  });

  it("are deterministic for a seed, and differ between seeds", async () => {
    const run = async (seed: number) => {
      const s = await start({ seed, faults: { serverErrorRate: 0.3, truncateRate: 0.2 } });
      const out: string[] = [];
      for (let i = 0; i < 40; i++) {
        const answer = await get(s.url, pathOf("blockInternalTransactions", { blockNumber: s.head() - (i % 5) }));
        out.push(`${answer.status}:${answer.json === undefined ? "bad" : "json"}`);
      }
      return { out, stats: s.stats() };
    };
    const a = await run(31);
    const b = await run(31);
    const c = await run(32);
    expect(a.out).toEqual(b.out);
    expect(a.stats).toEqual(b.stats);
    expect(c.out).not.toEqual(a.out);
    expect(a.stats.faults.serverError).toBeGreaterThan(0);
    expect(a.stats.faults.truncate).toBeGreaterThan(0);
    // Truncated answers are still 2xx answers: charged like any other.
    expect(a.stats.creditsTotal).toBe(a.out.filter((x) => x.startsWith("200")).length * OPERATIONS.blockInternalTransactions.cost);
  });

  it("resetStats clears every counter", async () => {
    const s = await start({ seed: 11 });
    await ok(s.url, pathOf("blockInternalTransactions", { blockNumber: s.head() }));
    expect(s.stats().creditsTotal).toBe(1);
    s.resetStats();
    expect(s.stats()).toEqual({ requests: {}, credits: {}, creditsTotal: 0, creditsToday: 0, faults: {}, rpcMethods: {} });
  });
});

describe("short pages and identical NFT transfers", () => {
  it("answers a list with one record fewer than its total_count for the next shortPages answers, then whole again", async () => {
    const s = await start({ seed: 21 });
    const path = pathOf("accountEventLogs", { accountAddress: s.addresses.busyToken });
    const query = { blockNumberStart: s.head() - 19, blockNumberEnd: s.head(), size: 2000 };
    const whole = await ok<ListResponse<unknown>>(s.url, path, query);
    expect(whole.results.length).toBe(whole.paging.total_count);
    s.setFaults({ shortPages: 2 });
    for (let i = 0; i < 2; i++) {
      const short = await ok<ListResponse<unknown>>(s.url, path, query);
      expect(short.paging.total_count).toBe(whole.paging.total_count);
      expect(short.results).toEqual(whole.results.slice(0, -1));
    }
    expect((await ok<ListResponse<unknown>>(s.url, path, query)).results.length).toBe(whole.paging.total_count);
    expect(s.stats().faults.shortPage).toBe(2);
  });

  it("missingRecords leaves one event log out of every list answer, its count too, as an explorer that never indexed it", async () => {
    const s = await start({ seed: 24 });
    const path = pathOf("accountEventLogs", { accountAddress: s.addresses.busyToken });
    const query = { blockNumberStart: s.head() - 19, blockNumberEnd: s.head(), size: 2000 };
    const whole = await ok<ListResponse<EventLog>>(s.url, path, query);
    const dropped = whole.results[3]!;
    const hash = dropped.transaction_hash!;
    const inTransaction = await ok<ListResponse<EventLog>>(s.url, pathOf("transactionEventLogs", { transactionHash: hash }));
    s.setFaults({ missingRecords: [{ transactionHash: hash.toUpperCase().replace("0X", "0x"), logIndex: dropped.log_index }] });
    const without = await ok<ListResponse<EventLog>>(s.url, path, query);
    expect(without.paging.total_count).toBe(whole.paging.total_count - 1);
    expect(without.results).toEqual(whole.results.filter((log) => log !== dropped));
    // Paged: the same records, none twice, the dropped one on no page.
    const paged = [...(await ok<ListResponse<EventLog>>(s.url, path, { ...query, size: 3, page: 1 })).results, ...(await ok<ListResponse<EventLog>>(s.url, path, { ...query, size: 3, page: 2 })).results];
    expect(paged).toEqual(without.results.slice(0, 6));
    const transactionWithout = await ok<ListResponse<EventLog>>(s.url, pathOf("transactionEventLogs", { transactionHash: hash }));
    expect(transactionWithout.results).toEqual(inTransaction.results.filter((log) => log.log_index !== dropped.log_index));
    s.setFaults({ missingRecords: [] });
    expect(await ok<ListResponse<EventLog>>(s.url, path, query)).toEqual(whole);
  });

  it("shortPageRate 1 makes every list answer that holds records short", async () => {
    const s = await start({ seed: 22, faults: { shortPageRate: 1 } });
    const block = await ok<ListResponse<unknown>>(s.url, pathOf("blockInternalTransactions", { blockNumber: s.head() }), { size: 2000 });
    expect(block.results.length).toBe(block.paging.total_count - 1);
  });

  it("serves two KIP37 transfers identical in every field of one transaction as two records", async () => {
    const s = await start({ seed: 23 });
    const hash = "0x" + "ab".repeat(32);
    const twin = { transaction_hash: hash, contract: { contract_address: s.addresses.kip37Collection, contract_type: "KIP37" }, token_id: "7", token_count: "5", from: s.addresses.wallets[2], to: s.addresses.wallets[3] };
    const block = s.addBlock({ nftTransfers: [twin, twin] });
    const byCollection = await ok<ListResponse<Record<string, unknown>>>(s.url, pathOf("nftTransfers", { tokenAddress: s.addresses.kip37Collection }), { blockNumberStart: block, blockNumberEnd: block });
    expect(byCollection.paging.total_count).toBe(2);
    expect(byCollection.results[0]).toEqual(byCollection.results[1]);
    const byTransaction = await ok<ListResponse<unknown>>(s.url, pathOf("transactionNftTransfers", { transactionHash: hash }));
    expect(byTransaction.results).toHaveLength(2);
  });
});

describe("the poll log", () => {
  it("notes who asked which window, its status, and the fault put into the answer (a 200 with a malformed body included)", async () => {
    const s = await start({ seed: 4 });
    const path = pathOf("accountEventLogs", { accountAddress: s.addresses.busyToken });
    const window = { blockNumberStart: s.head() - 5, blockNumberEnd: s.head() };
    const asking = { "x-kaiawatch-replica": "r1" };
    await get(s.url, path, window, asking);
    s.setFaults({ malformedRate: 1 });
    await get(s.url, path, window, asking);
    s.setFaults({ malformedRate: 0, serverErrorRate: 1 });
    await get(s.url, path, window, asking);
    expect(s.truth.polls().map(({ replica, from, to, status, fault }) => ({ replica, from, to, status, fault }))).toEqual([
      { replica: "r1", from: window.blockNumberStart, to: window.blockNumberEnd, status: "200", fault: undefined },
      { replica: "r1", from: window.blockNumberStart, to: window.blockNumberEnd, status: "200", fault: "malformed" },
      { replica: "r1", from: window.blockNumberStart, to: window.blockNumberEnd, status: expect.stringMatching(/^50[023]$/), fault: "serverError" },
    ]);
  });
});
