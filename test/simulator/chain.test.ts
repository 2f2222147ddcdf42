import { describe, expect, it } from "vitest";
import type { EventLog, InternalTransactionListItem, ListResponse, NftTransfer } from "../../src/explorer/types.js";
import type { Simulator } from "../../src/simulator/index.js";
import { get, ok, rpc } from "./http.js";
import { pathOf } from "./spec-schemas.js";
import { waitFor } from "../helpers/wait-for.js";
import { startSimulator } from "./start.js";

const start = startSimulator;

/** A sample of answers across operations, to compare two simulators. */
async function fingerprint(s: Simulator): Promise<unknown[]> {
  const a = s.addresses;
  const head = s.head();
  const tx = s.truth.blockTransactions(head)[0]!.hash;
  return Promise.all([
    ok(s.url, pathOf("accountEventLogs", { accountAddress: a.busyToken }), { size: 100 }),
    ok(s.url, pathOf("accountNftTransfers", { accountAddress: a.busyWallet }), { size: 100 }),
    ok(s.url, pathOf("accountInternalTransactions", { accountAddress: a.busyWallet }), { size: 100 }),
    ok(s.url, pathOf("nftInventoryDetails", { tokenAddress: a.busyCollection }), { size: 100 }),
    ok(s.url, pathOf("blockInternalTransactions", { blockNumber: head })),
    ok(s.url, pathOf("transactionInternalTransactions", { transactionHash: tx })),
    a,
  ]);
}

describe("a deterministic chain", () => {
  it("the same seed gives the same answers; another seed, others", async () => {
    const [a, b, c] = await Promise.all([start({ seed: 7, initialBlocks: 60 }), start({ seed: 7, initialBlocks: 60 }), start({ seed: 8, initialBlocks: 60 })]);
    const fa = await fingerprint(a);
    expect(await fingerprint(b)).toEqual(fa);
    expect(await fingerprint(c)).not.toEqual(fa);
    a.mine(5);
    b.mine(5);
    expect(await fingerprint(b)).toEqual(await fingerprint(a));
  });

  it("starts at startBlock with initialBlocks blocks, one second apart", async () => {
    const s = await start({ seed: 1, startBlock: 5000, initialBlocks: 10 });
    expect(s.head()).toBe(5009);
    const first = await ok<ListResponse<InternalTransactionListItem>>(s.url, pathOf("blockInternalTransactions", { blockNumber: 5000 }));
    const last = await ok<ListResponse<InternalTransactionListItem>>(s.url, pathOf("blockInternalTransactions", { blockNumber: 5009 }));
    const t0 = Date.parse(first.results[0]!.datetime!);
    expect(Date.parse(last.results[0]!.datetime!) - t0).toBe(9000);
    expect((await ok<ListResponse<unknown>>(s.url, pathOf("blockInternalTransactions", { blockNumber: 4999 }))).results).toEqual([]);
  });

  it("gives a busy wallet more than 2,000 records in a 1,000-block window, and a busy token too", async () => {
    const s = await start({ seed: 3, initialBlocks: 1000 });
    const head = s.head();
    const range = { from: head - 999, to: head };
    expect(s.truth.accountInternalTransactions(s.addresses.busyWallet, range).length).toBeGreaterThan(2000);
    expect(s.truth.accountEventLogs(s.addresses.busyToken, range).length).toBeGreaterThan(2000);
    const page = await ok<ListResponse<unknown>>(s.url, pathOf("accountInternalTransactions", { accountAddress: s.addresses.busyWallet }), { blockNumberStart: range.from, blockNumberEnd: range.to, size: 2000 });
    expect(page.paging.total_page).toBeGreaterThan(1);
  });

  it("density scales the records per block", async () => {
    const quiet = await start({ seed: 4, initialBlocks: 50, density: { eventLogs: 1, nftTransfers: 1, internalTransactions: 1 } });
    const busy = await start({ seed: 4, initialBlocks: 50, density: { eventLogs: 40, nftTransfers: 20, internalTransactions: 60 } });
    expect(busy.truth.recordCount()).toBeGreaterThan(quiet.truth.recordCount() * 10);
  });
});

describe("growth", () => {
  it("mine() adds blocks whose records are served at once", async () => {
    const s = await start({ seed: 2, initialBlocks: 10 });
    const before = s.head();
    s.mine(3);
    expect(s.head()).toBe(before + 3);
    const served = await ok<ListResponse<InternalTransactionListItem>>(s.url, pathOf("blockInternalTransactions", { blockNumber: before + 3 }), { size: 2000 });
    expect(served.results.length).toBe(s.truth.blockInternalTransactions(before + 3).length);
    expect(await rpc(s.rpcUrl, [{ jsonrpc: "2.0", id: 1, method: "eth_blockNumber" }, { jsonrpc: "2.0", id: 2, method: "kaia_blockNumber" }])).toEqual([
      { jsonrpc: "2.0", id: 1, result: `0x${(before + 3).toString(16)}` },
      { jsonrpc: "2.0", id: 2, result: `0x${(before + 3).toString(16)}` },
    ]);
  });

  it("blockTime makes a new block on a timer", async () => {
    const s = await start({ seed: 2, initialBlocks: 1, blockTime: 20 });
    const start0 = s.head();
    // The simulator's own timer, as `kaiawatch simulate` runs it: polled like a server.
    await waitFor(() => s.head() >= start0 + 3, 10_000, "three blocks made by the timer");
  });

  it("addBlock appends exactly the chosen records, grouped by transaction hash", async () => {
    const s = await start({ seed: 5, initialBlocks: 5 });
    const token = s.addresses.tokens[1] as string;
    const wallet = s.addresses.wallets[7] as string;
    const shared = `0x${"c".repeat(64)}`;
    const block = s.addBlock({
      eventLogs: [
        { contract_address: token, type: "Transfer", transaction_hash: shared, items: [{ name: "note", value: "<!channel> hi" }] },
        { contract_address: token, type: "Unknown", estimated_event_log: true },
      ],
      nftTransfers: [{ from: wallet, to: s.addresses.wallets[8], token_id: "77", transaction_hash: shared }],
      internalTransactions: [
        { from: wallet, to: s.addresses.wallets[9], amount: "123456789.123456789123456789", transaction_status: { status: "Fail", fail_message: "nope\r\nBcc: x" }, error: "execution reverted" },
        { from: wallet, type: "CREATE", amount: "0" },
      ],
    });
    expect(block).toBe(s.head());
    const logs = (await ok<ListResponse<EventLog>>(s.url, pathOf("accountEventLogs", { accountAddress: token }), { blockNumberStart: block, blockNumberEnd: block })).results;
    expect(logs).toHaveLength(2);
    expect(logs[1]).toMatchObject({ contract_address: token, transaction_hash: shared, block_number: block, items: [{ name: "note", value: "<!channel> hi" }], log_index: 0 });
    expect(logs[0]).toMatchObject({ type: "Unknown", estimated_event_log: true, log_index: 1 });
    const nfts = (await ok<ListResponse<NftTransfer>>(s.url, pathOf("transactionNftTransfers", { transactionHash: shared }))).results;
    expect(nfts).toMatchObject([{ from: wallet, token_id: "77", block_id: block, transaction_index: 0 }]);
    const calls = (await ok<ListResponse<InternalTransactionListItem>>(s.url, pathOf("accountInternalTransactions", { accountAddress: wallet }), { blockNumberStart: block, blockNumberEnd: block })).results;
    expect(calls).toHaveLength(2);
    expect(calls.map((c) => c.amount).sort()).toEqual(["0", "123456789.123456789123456789"]);
    expect(calls.find((c) => c.type === "CREATE")?.transaction_status).toEqual({ status: "Success" });
    expect(s.truth.blockTransactions(block).map((t) => t.index)).toEqual([0, 1, 2, 3]);
    // The chosen NFT transfer moved the token: the collection's inventory knows the new holder.
    const item = await ok<{ holder?: { address: string } }>(s.url, pathOf("nftItem", { tokenAddress: s.addresses.busyCollection, tokenId: "77" }));
    expect(item.holder?.address).toBe(s.addresses.wallets[8]);
    // An empty block is a block too.
    expect(s.addBlock()).toBe(block + 1);
    expect(s.truth.blockTransactions(block + 1)).toEqual([]);
  });
});

describe("JSON-RPC", () => {
  it("answers unknown methods and bad bodies with JSON-RPC errors", async () => {
    const s = await start({ seed: 1, initialBlocks: 2 });
    // eth_getBalance is served now (test/simulator/balances.test.ts); eth_getCode is not.
    expect(await rpc(s.rpcUrl, { jsonrpc: "2.0", id: 3, method: "eth_getCode", params: [] })).toMatchObject({ id: 3, error: { code: -32601 } });
    const res = await fetch(s.rpcUrl, { method: "POST", body: "{not json" });
    expect(await res.json()).toMatchObject({ id: null, error: { code: -32700 } });
    expect(s.stats().requests.rpc).toEqual({ "200": 2 });
  });
});

describe("hostile content", () => {
  const MARKERS = ["<!channel>", "<script>", "\r\n", "\u202E", "\u200B"];

  async function servedText(s: Simulator): Promise<string> {
    const a = s.addresses;
    const parts: string[] = [];
    for (const collection of a.nftCollections) {
      parts.push((await get(s.url, pathOf("nftInventoryDetails", { tokenAddress: collection }), { size: 2000 })).text);
      for (const id of ["1", "2", "3"]) parts.push((await get(s.url, pathOf("nftItem", { tokenAddress: collection, tokenId: id }))).text);
    }
    parts.push((await get(s.url, pathOf("accountInternalTransactions", { accountAddress: a.busyWallet }), { size: 2000 })).text);
    parts.push((await get(s.url, pathOf("accountNftInventories", { accountAddress: a.busyWallet }), { size: 2000, excludeIfTokenUriIsEmpty: false })).text);
    for (let b = s.head() - 40; b <= s.head(); b++) for (const tx of s.truth.blockTransactions(b)) if (tx.status === "Fail") parts.push((await get(s.url, pathOf("transactionInternalTransactions", { transactionHash: tx.hash }))).text);
    return parts.map((p) => JSON.stringify(JSON.parse(p))).join("\n");
  }

  it("serves mentions, markup, CR/LF, bidi and zero-width characters and 100 KB strings when asked, and none otherwise", async () => {
    const [hostile, plain] = await Promise.all([start({ seed: 9, initialBlocks: 150, hostile: true }), start({ seed: 9, initialBlocks: 150 })]);
    const hostileText = await servedText(hostile);
    const plainText = await servedText(plain);
    for (const marker of MARKERS) {
      const encoded = JSON.stringify(marker).slice(1, -1);
      expect(hostileText.includes(marker) || hostileText.includes(encoded), JSON.stringify(marker)).toBe(true);
      expect(plainText.includes(marker) || plainText.includes(encoded), JSON.stringify(marker)).toBe(false);
    }
    // Token 1 of the first collection carries a 100 KB description.
    const item = await ok<{ metadata?: { description?: string } }>(hostile.url, pathOf("nftItem", { tokenAddress: hostile.addresses.nftCollections[0]!, tokenId: "1" }));
    expect(item.metadata?.description?.length).toBeGreaterThanOrEqual(100 * 1024);
  });
});
