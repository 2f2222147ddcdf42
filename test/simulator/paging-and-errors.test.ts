import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventLog, ListResponse } from "../../src/explorer/types.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { get, ok } from "./http.js";
import { errorBody, pathOf } from "./spec-schemas.js";

let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator({ seed: 11, initialBlocks: 200 });
});
afterAll(async () => {
  await sim.close();
});

async function expectError(path: string, query: Record<string, string | number | undefined>, status: number, code: string, message?: string) {
  await expectErrorAt(sim.url, path, query, status, code, message);
}

async function expectErrorAt(url: string, path: string, query: Record<string, string | number | undefined>, status: number, code: string, message?: string) {
  const answer = await get(url, path, query);
  expect(answer.status, `${path} ${JSON.stringify(query)}`).toBe(status);
  expect(errorBody.parse(answer.json).code).toBe(code);
  if (message !== undefined) expect((answer.json as { message: string }).message).toBe(message);
}

describe("paging", () => {
  it("defaults to page 1 of 20 records", async () => {
    const body = await ok<ListResponse<EventLog>>(sim.url, pathOf("accountEventLogs", { accountAddress: sim.addresses.busyToken }));
    expect(body.results).toHaveLength(20);
    expect(body.paging.current_page).toBe(1);
    expect(body.paging.total_page).toBe(Math.ceil(body.paging.total_count / 20));
    expect(body.paging.last).toBe(false);
  });

  it("enforces size 1..2000 and page >= 1 with 400 INVALID_REQUEST", async () => {
    const path = pathOf("accountEventLogs", { accountAddress: sim.addresses.busyToken });
    for (const query of [{ size: 0 }, { size: 2001 }, { size: -5 }, { size: "ten" }, { size: "1.5" }, { page: 0 }, { page: -1 }, { page: "x" }]) await expectError(path, query, 400, "INVALID_REQUEST");
    expect((await ok<ListResponse<EventLog>>(sim.url, path, { size: 2000 })).results.length).toBeGreaterThan(20);
    expect((await ok<ListResponse<EventLog>>(sim.url, path, { size: 1 })).results).toHaveLength(1);
  });

  it("refuses a page past the last with 'totalPage is over.'", async () => {
    const path = pathOf("accountNftTransfers", { accountAddress: sim.addresses.busyWallet });
    const first = await ok<ListResponse<unknown>>(sim.url, path, { size: 50 });
    const lastPage = first.paging.total_page;
    const last = await ok<ListResponse<unknown>>(sim.url, path, { size: 50, page: lastPage });
    expect(last.paging.last).toBe(true);
    expect(last.results.length).toBe(first.paging.total_count - 50 * (lastPage - 1));
    await expectError(path, { size: 50, page: lastPage + 1 }, 400, "INVALID_REQUEST", "Requested parameter is not valid. (totalPage is over.)");
  });

  it("answers page 1 of an empty list normally (total_page 0), and refuses page 2", async () => {
    const path = pathOf("accountEventLogs", { accountAddress: sim.addresses.busyWallet });
    const body = await ok<ListResponse<unknown>>(sim.url, path);
    // No block range asked, so no property (the server omits nulls).
    expect(body).toEqual({ results: [], paging: { total_count: 0, current_page: 1, last: true, total_page: 0 } });
    await expectError(path, { page: 2 }, 400, "INVALID_REQUEST", "Requested parameter is not valid. (totalPage is over.)");
  });

  it("pages cover the list exactly once, newest first", async () => {
    const path = pathOf("accountInternalTransactions", { accountAddress: sim.addresses.busyWallet });
    const whole = await ok<ListResponse<{ block_id: number; transaction_index: number; call_id: number }>>(sim.url, path, { size: 2000 });
    const pieces: unknown[] = [];
    for (let page = 1; ; page++) {
      const body = await ok<ListResponse<unknown>>(sim.url, path, { size: 37, page });
      pieces.push(...body.results);
      if (body.paging.last) break;
    }
    expect(pieces).toEqual(whole.results);
    expect(whole.results.length).toBe(whole.paging.total_count);
  });
});

describe("block ranges", () => {
  it("server dialect: clamp to the indexed head first, then require start <= end and end - start <= 1,000; property says what was served", async () => {
    const path = pathOf("accountEventLogs", { accountAddress: sim.addresses.busyToken });
    const head = sim.head();
    await expectError(path, { blockNumberStart: head, blockNumberEnd: head - 1 }, 400, "INVALID_REQUEST", "Requested parameter is not valid. (check range of block. (start number must be before end))");
    await expectError(path, { blockNumberStart: head - 1001, blockNumberEnd: head }, 400, "INVALID_REQUEST", "Requested parameter is not valid. (check range of block. (max interval over))");
    await expectError(path, { blockNumberStart: "abc", blockNumberEnd: head }, 400, "INVALID_REQUEST");
    const full = await ok<ListResponse<EventLog>>(sim.url, path, { blockNumberStart: head - 999, blockNumberEnd: head, size: 2000 });
    expect(full.paging.total_count).toBe(sim.truth.accountEventLogs(sim.addresses.busyToken, { from: head - 999, to: head }).length);
    expect(full.property).toEqual({ blockNumberStart: head - 999, blockNumberEnd: head, blockInterval: 1000 });
    const one = await ok<ListResponse<EventLog>>(sim.url, path, { blockNumberStart: head - 3, blockNumberEnd: head - 3, size: 2000 });
    expect(one.results.every((r) => r.block_number === head - 3)).toBe(true);
    // Past the head: answered for what exists, and said so (klaytn/finder-api BlockRangeService).
    const past = await ok<ListResponse<EventLog>>(sim.url, path, { blockNumberStart: head - 5, blockNumberEnd: head + 50, size: 2000 });
    expect(past.property).toEqual({ blockNumberStart: head - 5, blockNumberEnd: head, blockInterval: 1000 });
    // A single bound spans the server's interval from it.
    const open = await ok<ListResponse<EventLog>>(sim.url, path, { blockNumberStart: head - 10, size: 2000 });
    expect(open.paging.total_count).toBe(sim.truth.accountEventLogs(sim.addresses.busyToken, { from: head - 10, to: head }).length);
    expect(open.property).toEqual({ blockNumberStart: head - 10, blockNumberEnd: head, blockInterval: 1000 });
  });

  it("document dialect: require start <= end and at most 1,000 blocks; a bound left out is open; property is {}", async () => {
    const doc = await createSimulator({ seed: 11, initialBlocks: 30, dialect: "document" });
    try {
      const path = pathOf("accountEventLogs", { accountAddress: doc.addresses.busyToken });
      const head = doc.head();
      await expectErrorAt(doc.url, path, { blockNumberStart: head, blockNumberEnd: head - 1 }, 400, "INVALID_REQUEST");
      await expectErrorAt(doc.url, path, { blockNumberStart: head - 1000, blockNumberEnd: head }, 400, "INVALID_REQUEST");
      const open = await ok<ListResponse<EventLog>>(doc.url, path, { blockNumberStart: head - 10, size: 2000 });
      expect(open.paging.total_count).toBe(doc.truth.accountEventLogs(doc.addresses.busyToken, { from: head - 10, to: head }).length);
      expect(open.property).toEqual({});
    } finally {
      await doc.close();
    }
  });
});

describe("errors", () => {
  it("answers unknown paths and methods with 404 NOT_FOUND_URL", async () => {
    await expectError("/api/v1/nothing-here", {}, 404, "NOT_FOUND_URL");
    await expectError("/api/v2/blocks/1/internal-transactions", {}, 404, "NOT_FOUND_URL");
    const post = await fetch(new URL(pathOf("blockInternalTransactions", { blockNumber: sim.head() }), sim.url), { method: "POST", body: "{}" });
    expect(post.status).toBe(404);
    expect(errorBody.parse(await post.json()).code).toBe("NOT_FOUND_URL");
  });

  it("validates addresses, hashes, block numbers, token ids, signatures and keywords", async () => {
    await expectError(pathOf("accountEventLogs", { accountAddress: "0x1234" }), {}, 400, "INVALID_REQUEST");
    await expectError("/api/v1/accounts/%zz/event-logs", {}, 400, "INVALID_REQUEST");
    await expectError(pathOf("accountNftTransfers", { accountAddress: "not-an-address" }), {}, 400, "INVALID_REQUEST");
    await expectError(pathOf("accountNftTransfers", { accountAddress: sim.addresses.busyWallet }), { contractAddress: "0xzz" }, 400, "INVALID_REQUEST");
    await expectError(pathOf("transactionEventLogs", { transactionHash: "0xabc" }), {}, 400, "INVALID_REQUEST");
    await expectError(pathOf("blockInternalTransactions", { blockNumber: "latest" }), {}, 400, "INVALID_REQUEST");
    await expectError(pathOf("nftItem", { tokenAddress: sim.addresses.busyCollection, tokenId: "one" }), {}, 400, "INVALID_REQUEST");
    await expectError(pathOf("accountEventLogs", { accountAddress: sim.addresses.busyToken }), { signature: "Transfer(address,address,uint256)" }, 400, "INVALID_REQUEST");
    await expectError(pathOf("nftInventoryDetails", { tokenAddress: sim.addresses.busyCollection }), { keyword: "kitty" }, 400, "INVALID_REQUEST");
    await expectError(pathOf("accountNftInventories", { accountAddress: sim.addresses.busyWallet }), { excludeIfTokenUriIsEmpty: "yes" }, 400, "INVALID_REQUEST");
  });

  it("answers 404 NOT_FOUND_TRANSACTION for internal transactions of an unknown hash, an empty page for the other per-transaction lists", async () => {
    const unknown = `0x${"ab".repeat(32)}`;
    await expectError(pathOf("transactionInternalTransactions", { transactionHash: unknown }), {}, 404, "NOT_FOUND_TRANSACTION");
    for (const op of ["transactionNftTransfers", "transactionEventLogs"] as const) {
      const body = await ok<ListResponse<unknown>>(sim.url, pathOf(op, { transactionHash: unknown }));
      expect(body.results).toEqual([]);
      expect(body.paging.total_count).toBe(0);
    }
  });

  it("answers 404 for an NFT item that does not exist", async () => {
    await expectError(pathOf("nftItem", { tokenAddress: sim.addresses.busyCollection, tokenId: "999999999999" }), {}, 404, "NOT_FOUND_NFT_ITEM");
    await expectError(pathOf("nftItem", { tokenAddress: sim.addresses.busyWallet, tokenId: "1" }), {}, 404, "NOT_FOUND_NFT");
  });
});

describe("the 40,000 count cap", () => {
  it("caps total_count, so paging cannot reach older records; a narrower window can", async () => {
    const s = await createSimulator({ seed: 12, initialBlocks: 0 });
    try {
      const contract = s.addresses.tokens[2] as string;
      const perBlock = 1000;
      const blocks: number[] = [];
      for (let b = 0; b < 41; b++) blocks.push(s.addBlock({ eventLogs: Array.from({ length: perBlock }, () => ({ contract_address: contract })) }));
      const first = blocks[0] as number;
      const last = blocks.at(-1) as number;
      const path = pathOf("accountEventLogs", { accountAddress: contract });
      const q = { blockNumberStart: first, blockNumberEnd: last, size: 2000 };
      const page1 = await ok<ListResponse<EventLog>>(s.url, path, q);
      expect(page1.paging.total_count).toBe(40_000);
      expect(page1.paging.total_page).toBe(20);
      const page20 = await ok<ListResponse<EventLog>>(s.url, path, { ...q, page: 20 });
      expect(page20.paging.last).toBe(true);
      // The 40,000th newest record is in the second block: the first block is out of reach.
      expect(page20.results.at(-1)?.block_number).toBe(first + 1);
      expect((await get(s.url, path, { ...q, page: 21 })).status).toBe(400);
      const older = await ok<ListResponse<EventLog>>(s.url, path, { blockNumberStart: first, blockNumberEnd: first, size: 2000 });
      expect(older.paging.total_count).toBe(perBlock);
      expect(older.results.every((r) => r.block_number === first)).toBe(true);
    } finally {
      await s.close();
    }
  });
});
