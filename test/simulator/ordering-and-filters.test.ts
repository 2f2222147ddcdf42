import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountNftInventory, EventLog, InternalTransactionListItem, InternalTransactionOfTransaction, ListResponse, NftInventoryDetail, NftTransfer } from "../../src/explorer/types.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { ok } from "./http.js";
import { pathOf } from "./spec-schemas.js";

let sim: Simulator;
let head: number;
beforeAll(async () => {
  sim = await createSimulator({ seed: 21, initialBlocks: 300 });
  head = sim.head();
});
afterAll(async () => {
  await sim.close();
});

const topic0 = (signature: string) => `0x${bytesToHex(keccak_256(utf8ToBytes(signature)))}`;
const TRANSFER = topic0("Transfer(address,address,uint256)");
const APPROVAL = topic0("Approval(address,address,uint256)");

async function all<T>(path: string, query: Record<string, string | number | boolean> = {}): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const body = await ok<ListResponse<T>>(sim.url, path, { size: 500, ...query, page });
    out.push(...body.results);
    if (body.paging.last) return out;
  }
}

/** True when every neighbour pair is in order by `compare` (negative or zero). */
function sortedBy<T>(items: T[], compare: (a: T, b: T) => number): boolean {
  return items.every((item, i) => i === 0 || compare(items[i - 1] as T, item) <= 0);
}

describe("ordering (newest first, as the real service)", () => {
  it("account event logs: (block, tx index, log index) descending, i.e. the chain reversed", async () => {
    const served = await all<EventLog>(pathOf("accountEventLogs", { accountAddress: sim.addresses.busyToken }));
    const truth = sim.truth.accountEventLogs(sim.addresses.busyToken, { from: 0, to: head });
    expect(served.length).toBeGreaterThan(500);
    expect(served).toEqual([...truth].reverse());
    expect(sortedBy(served, (a, b) => b.block_number - a.block_number || b.log_index - a.log_index)).toBe(true);
  });

  it("NFT transfers by account and by token: block descending, then transaction index descending", async () => {
    const byAccount = await all<NftTransfer>(pathOf("accountNftTransfers", { accountAddress: sim.addresses.busyWallet }));
    const byToken = await all<NftTransfer>(pathOf("nftTransfers", { tokenAddress: sim.addresses.busyCollection }));
    for (const list of [byAccount, byToken]) {
      expect(list.length).toBeGreaterThan(100);
      expect(sortedBy(list, (a, b) => b.block_id - a.block_id || (b.transaction_index ?? 0) - (a.transaction_index ?? 0))).toBe(true);
    }
    expect(byAccount).toEqual([...sim.truth.accountNftTransfers(sim.addresses.busyWallet, { from: 0, to: head })].reverse());
    expect(byToken).toEqual([...sim.truth.nftTransfers(sim.addresses.busyCollection, { from: 0, to: head })].reverse());
  });

  it("account internal transactions: block and tx index descending, then call id ascending", async () => {
    const served = await all<InternalTransactionListItem>(pathOf("accountInternalTransactions", { accountAddress: sim.addresses.busyWallet }));
    expect(sortedBy(served, (a, b) => b.block_id - a.block_id || b.transaction_index - a.transaction_index || a.call_id - b.call_id)).toBe(true);
    const truth = sim.truth.accountInternalTransactions(sim.addresses.busyWallet, { from: 0, to: head });
    expect(sortedBy(truth, (a, b) => a.block_id - b.block_id || a.transaction_index - b.transaction_index || a.call_id - b.call_id)).toBe(true);
    const key = (r: InternalTransactionListItem) => `${r.block_id}:${r.transaction_index}:${r.call_id}`;
    expect(served.map(key).sort()).toEqual(truth.map(key).sort());
    // Some transactions hold several calls of the account, so the call-id order is exercised.
    expect(served.some((r, i) => i > 0 && served[i - 1]?.transaction_hash === r.transaction_hash)).toBe(true);
  });

  it("block internal transactions: tx index descending, call id ascending", async () => {
    let multiCallTx = false;
    for (let block = head - 20; block <= head; block++) {
      const served = await all<InternalTransactionListItem>(pathOf("blockInternalTransactions", { blockNumber: block }));
      expect(sortedBy(served, (a, b) => b.transaction_index - a.transaction_index || a.call_id - b.call_id)).toBe(true);
      expect(served.length).toBe(sim.truth.blockInternalTransactions(block).length);
      expect(served.every((r) => r.block_id === block)).toBe(true);
      multiCallTx ||= served.some((r, i) => i > 0 && served[i - 1]?.transaction_index === r.transaction_index);
    }
    expect(multiCallTx).toBe(true);
  });

  it("transaction internal transactions: call id ascending, parents before children", async () => {
    let nested = 0;
    for (let block = head - 30; block <= head; block++) {
      for (const tx of sim.truth.blockTransactions(block)) {
        const calls = await all<InternalTransactionOfTransaction>(pathOf("transactionInternalTransactions", { transactionHash: tx.hash }));
        expect(sortedBy(calls, (a, b) => a.call_id - b.call_id)).toBe(true);
        for (const c of calls) {
          if (c.parent_call_id === undefined) continue;
          nested++;
          const parent = calls.find((p) => p.call_id === c.parent_call_id);
          expect(parent).toBeDefined();
          expect(parent!.call_id).toBeLessThan(c.call_id);
          expect(c.level).toBe(parent!.level + 1);
        }
        if (tx.status === "Fail" && calls.length) expect(calls.some((c) => c.reverted !== undefined)).toBe(true);
      }
    }
    expect(nested).toBeGreaterThan(0);
  });
});

describe("what each account list holds", () => {
  it("account event logs are the logs the contract emitted; a wallet's list is empty", async () => {
    const logs = await all<EventLog>(pathOf("accountEventLogs", { accountAddress: sim.addresses.busyToken }));
    expect(logs.every((l) => l.contract_address === sim.addresses.busyToken)).toBe(true);
    for (const wallet of sim.addresses.wallets.slice(0, 5)) expect(await all(pathOf("accountEventLogs", { accountAddress: wallet }))).toEqual([]);
  });

  it("account NFT transfers and internal transactions are those where the account is from or to", async () => {
    const w = sim.addresses.busyWallet;
    const nfts = await all<NftTransfer>(pathOf("accountNftTransfers", { accountAddress: w }));
    expect(nfts.every((t) => t.from === w || t.to === w)).toBe(true);
    expect(nfts.some((t) => t.from === w) && nfts.some((t) => t.to === w)).toBe(true);
    const calls = await all<InternalTransactionListItem>(pathOf("accountInternalTransactions", { accountAddress: w }));
    expect(calls.every((c) => c.from === w || c.to === w)).toBe(true);
    expect(calls.some((c) => c.from === w) && calls.some((c) => c.to === w)).toBe(true);
  });

  it("compares addresses case-insensitively", async () => {
    const upper = `0x${sim.addresses.busyWallet.slice(2).toUpperCase()}`;
    const a = await ok(sim.url, pathOf("accountNftTransfers", { accountAddress: upper }));
    const b = await ok(sim.url, pathOf("accountNftTransfers", { accountAddress: sim.addresses.busyWallet }));
    expect(a).toEqual(b);
  });
});

describe("filters", () => {
  it("signature: topic0, a lowercase keccak-256 hash (also accepted in upper case)", async () => {
    const path = pathOf("accountEventLogs", { accountAddress: sim.addresses.busyToken });
    const transfers = await all<EventLog>(path, { signature: TRANSFER });
    const approvals = await all<EventLog>(path, { signature: APPROVAL.toUpperCase().replace("0X", "0x") });
    const everything = await all<EventLog>(path);
    expect(transfers.length).toBeGreaterThan(0);
    expect(approvals.length).toBeGreaterThan(0);
    expect(transfers.every((l) => l.topics[0] === TRANSFER && l.type === "Transfer")).toBe(true);
    expect(approvals.every((l) => l.topics[0] === APPROVAL && l.type === "Approval")).toBe(true);
    expect(transfers).toEqual(everything.filter((l) => l.topics[0] === TRANSFER));
    expect(transfers).toEqual([...sim.truth.accountEventLogs(sim.addresses.busyToken, { from: 0, to: head, signature: TRANSFER })].reverse());
    // Decoded items agree with the raw topics and data.
    for (const l of transfers.slice(0, 50)) {
      const items = Object.fromEntries(l.items.map((i) => [i.name, i.value]));
      expect(`0x${l.topics[1]?.slice(26)}`).toBe(items.from);
      expect(`0x${l.topics[2]?.slice(26)}`).toBe(items.to);
      expect(BigInt(l.data).toString()).toBe(items.value);
    }
    const tx = transfers[0]!.transaction_hash!;
    const inTx = await all<EventLog>(pathOf("transactionEventLogs", { transactionHash: tx }), { signature: TRANSFER });
    expect(inTx.length).toBeGreaterThan(0);
    expect(inTx.every((l) => l.topics[0] === TRANSFER && l.transaction_hash === tx)).toBe(true);
  });

  it("block range bounds every listing", async () => {
    const from = head - 40;
    const to = head - 20;
    const q = { blockNumberStart: from, blockNumberEnd: to };
    const within = (b: number) => b >= from && b <= to;
    const logs = await all<EventLog>(pathOf("accountEventLogs", { accountAddress: sim.addresses.busyToken }), q);
    const nfts = await all<NftTransfer>(pathOf("accountNftTransfers", { accountAddress: sim.addresses.busyWallet }), q);
    const tokenNfts = await all<NftTransfer>(pathOf("nftTransfers", { tokenAddress: sim.addresses.busyCollection }), q);
    const calls = await all<InternalTransactionListItem>(pathOf("accountInternalTransactions", { accountAddress: sim.addresses.busyWallet }), q);
    expect(logs.length * nfts.length * tokenNfts.length * calls.length).toBeGreaterThan(0);
    expect(logs.every((r) => within(r.block_number))).toBe(true);
    expect([...nfts, ...tokenNfts].every((r) => within(r.block_id))).toBe(true);
    expect(calls.every((r) => within(r.block_id))).toBe(true);
    expect(calls.length).toBe(sim.truth.accountInternalTransactions(sim.addresses.busyWallet, { from, to }).length);
  });

  it("tokenId and contractAddress narrow NFT transfers", async () => {
    const collection = sim.addresses.busyCollection;
    const transfers = await all<NftTransfer>(pathOf("nftTransfers", { tokenAddress: collection }));
    const tokenId = transfers[Math.floor(transfers.length / 2)]!.token_id;
    const one = await all<NftTransfer>(pathOf("nftTransfers", { tokenAddress: collection }), { tokenId });
    expect(one.length).toBeGreaterThan(0);
    expect(one).toEqual(transfers.filter((t) => t.token_id === tokenId));
    const mine = await all<NftTransfer>(pathOf("accountNftTransfers", { accountAddress: sim.addresses.busyWallet }));
    const other = sim.addresses.nftCollections[2] as string;
    const narrowed = await all<NftTransfer>(pathOf("accountNftTransfers", { accountAddress: sim.addresses.busyWallet }), { contractAddress: other });
    expect(narrowed.length).toBeGreaterThan(0);
    expect(narrowed).toEqual(mine.filter((t) => t.contract.contract_address === other));
  });

  it("keyword narrows inventory details to a holder or a token id", async () => {
    const collection = sim.addresses.busyCollection;
    const details = await all<NftInventoryDetail>(pathOf("nftInventoryDetails", { tokenAddress: collection }));
    expect(details.length).toBeGreaterThan(10);
    const holder = sim.addresses.busyWallet;
    const byHolder = await all<NftInventoryDetail>(pathOf("nftInventoryDetails", { tokenAddress: collection }), { keyword: holder });
    expect(byHolder.length).toBeGreaterThan(0);
    expect(byHolder).toEqual(details.filter((d) => d.holder.address === holder));
    const tokenId = details[3]!.token_id;
    expect(await all(pathOf("nftInventoryDetails", { tokenAddress: collection }), { keyword: tokenId })).toEqual(details.filter((d) => d.token_id === tokenId));
    // Every holder listed holds the token: the NFT item agrees.
    const item = await ok<{ holder?: { address: string } }>(sim.url, pathOf("nftItem", { tokenAddress: collection, tokenId }));
    expect(item.holder?.address).toBe(details[3]!.holder.address);
  });

  it("excludeIfTokenUriIsEmpty defaults to true", async () => {
    const path = pathOf("accountNftInventories", { accountAddress: sim.addresses.busyWallet });
    const byDefault = await all<AccountNftInventory>(path);
    const explicitTrue = await all<AccountNftInventory>(path, { excludeIfTokenUriIsEmpty: true });
    const withEmpty = await all<AccountNftInventory>(path, { excludeIfTokenUriIsEmpty: false });
    expect(byDefault).toEqual(explicitTrue);
    expect(byDefault.every((i) => i.token_uri !== "")).toBe(true);
    expect(withEmpty.some((i) => i.token_uri === "")).toBe(true);
    expect(withEmpty.filter((i) => i.token_uri !== "")).toEqual(byDefault);
  });
});
