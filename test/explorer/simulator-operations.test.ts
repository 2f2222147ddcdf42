/**
 * The client against the simulator: every operation called through createExplorerClient
 * returns what the simulator's chain holds (its `truth`), every page of a window is walked,
 * numbers stay exact, and the credit meter counts what the service charged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { OPERATIONS, type OperationName } from "../../src/explorer/operations.js";
import type { AccountNftInventory, EventLog, NftInventoryDetail, NftItem, NftTransfer } from "../../src/explorer/types.js";
import type { NftInventoryDetailsParams } from "../../src/explorer/params.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { waitFor } from "../helpers/wait-for.js";
import { START_BLOCK, ZERO_ADDRESS, asClientTransfer, beyondFloat, byCallPosition, collect, compareTokenIds, replayTransfers, requestsOf } from "./simulator-support.js";

let sim: Simulator;
let client: ExplorerClient;

beforeAll(async () => {
  sim = await createSimulator({ seed: 11, initialBlocks: 120 });
  client = createExplorerClient(createTestCommon(), { baseUrl: sim.url, requestsPerSecond: 1000, retryBaseMs: 1 });
});
afterAll(async () => {
  await client?.close();
  await sim?.close();
});

/** A window inside the chain, so that the block-range filters have records on both sides of it. */
const RANGE = { from: START_BLOCK + 20, to: START_BLOCK + 89 };
const RANGE_PARAMS = { blockNumberStart: RANGE.from, blockNumberEnd: RANGE.to };
const wholeChain = () => ({ from: START_BLOCK, to: sim.head() });
const newestFirst = <T>(oldestFirst: T[]) => [...oldestFirst].reverse();
/** Every address that emits event logs or holds NFT transfers in the simulated world. */
const emitters = () => [...sim.addresses.tokens, ...sim.addresses.nftCollections, ...sim.addresses.contracts];
const transfersOf = (collection: string) => sim.truth.nftTransfers(collection, wholeChain());
/** Operations 2, 6 and 9 are passed on as received (nothing in kaiawatch reads them): read here as the document describes them. */
const inventoryDetails = async (params: NftInventoryDetailsParams) => (await collect(client.paginate("nftInventoryDetails", params))) as unknown as NftInventoryDetail[];

describe("every operation returns what the chain holds", () => {
  it("accountEventLogs: the logs the contract emitted in the range, also filtered by signature", async () => {
    const token = sim.addresses.busyToken;
    const truth = sim.truth.accountEventLogs(token, RANGE);
    expect(truth.length).toBeGreaterThan(50);
    expect(sim.truth.accountEventLogs(token, wholeChain()).length).toBeGreaterThan(truth.length);
    const page = await client.accountEventLogs({ accountAddress: token, ...RANGE_PARAMS, size: 2000 });
    expect(page.paging).toMatchObject({ total_count: truth.length, current_page: 1, last: true });
    expect(page.results).toEqual(newestFirst(truth));

    const approvalTopic = truth.find((log) => log.type === "Approval")!.topics[0]!;
    const approvals = sim.truth.accountEventLogs(token, { ...RANGE, signature: approvalTopic });
    expect(approvals.length).toBeGreaterThan(0);
    expect(approvals.length).toBeLessThan(truth.length);
    // Written in capitals, as a user might paste it: the client sends topic0 lowercase.
    const filtered = await client.accountEventLogs({ accountAddress: token, signature: `0x${approvalTopic.slice(2).toUpperCase()}`, ...RANGE_PARAMS, size: 2000 });
    expect(filtered.results).toEqual(newestFirst(approvals));
  });

  it("accountNftTransfers: the account's transfers in the range, also of one collection", async () => {
    const wallet = sim.addresses.busyWallet;
    const truth = sim.truth.accountNftTransfers(wallet, RANGE).map(asClientTransfer);
    expect(truth.length).toBeGreaterThan(20);
    const page = await client.accountNftTransfers({ accountAddress: wallet, ...RANGE_PARAMS, size: 2000 });
    expect(page.results).toEqual(newestFirst(truth));

    const multi = sim.addresses.nftCollections[2]!;
    const ofCollection = sim.truth.accountNftTransfers(wallet, { ...RANGE, contractAddress: multi }).map(asClientTransfer);
    expect(ofCollection.length).toBeGreaterThan(0);
    expect(ofCollection.length).toBeLessThan(truth.length);
    const filtered = await client.accountNftTransfers({ accountAddress: wallet, contractAddress: multi, ...RANGE_PARAMS, size: 2000 });
    expect(filtered.results).toEqual(newestFirst(ofCollection));
  });

  it("nftTransfers: the collection's transfers in the range, also of one token id", async () => {
    const collection = sim.addresses.busyCollection;
    const truth = sim.truth.nftTransfers(collection, RANGE).map(asClientTransfer);
    const page = await client.nftTransfers({ tokenAddress: collection, ...RANGE_PARAMS, size: 2000 });
    expect(page.results).toEqual(newestFirst(truth));

    // The token id that moved most often over the whole chain, asked for as a bigint.
    const moves = new Map<string, number>();
    for (const t of transfersOf(collection)) moves.set(t.token_id, (moves.get(t.token_id) ?? 0) + 1);
    const [tokenId, count] = [...moves].sort((a, b) => b[1] - a[1])[0]!;
    expect(count).toBeGreaterThan(1);
    const ofToken = sim.truth.nftTransfers(collection, { ...wholeChain(), tokenId }).map(asClientTransfer);
    const filtered = await client.nftTransfers({ tokenAddress: collection, tokenId: BigInt(tokenId), size: 2000 });
    expect(filtered.results).toEqual(newestFirst(ofToken));
  });

  it("accountInternalTransactions: the account's internal transactions in the range, amounts exact", async () => {
    const wallet = sim.addresses.busyWallet;
    const truth = sim.truth.accountInternalTransactions(wallet, RANGE);
    expect(truth.length).toBeGreaterThan(100);
    const page = await client.accountInternalTransactions({ accountAddress: wallet, ...RANGE_PARAMS, size: 2000 });
    expect(page.paging.total_count).toBe(truth.length);
    expect([...page.results].sort(byCallPosition)).toEqual(truth);
    expect(page.results.filter((r) => beyondFloat(r.amount)).length).toBeGreaterThan(10);
  });

  it("blockInternalTransactions: every internal transaction of each block", async () => {
    for (let block = RANGE.from; block < RANGE.from + 8; block++) {
      const truth = sim.truth.blockInternalTransactions(block);
      expect(truth.length).toBeGreaterThan(0);
      const page = await client.blockInternalTransactions({ blockNumber: block, size: 2000 });
      expect([...page.results].sort(byCallPosition)).toEqual(truth);
    }
  });

  it("transactionInternalTransactions: each transaction's call tree agrees with the block's list", async () => {
    let checked = 0;
    let failed = 0;
    for (let block = RANGE.from; checked < 15 || failed < 1; block++) {
      expect(block).toBeLessThanOrEqual(RANGE.to);
      const calls = sim.truth.blockInternalTransactions(block);
      for (const tx of sim.truth.blockTransactions(block)) {
        const ofTx = calls.filter((c) => c.transaction_hash === tx.hash);
        if (ofTx.length === 0) continue;
        const page = await client.transactionInternalTransactions({ transactionHash: tx.hash, size: 2000 });
        const tree = page.results;
        // The server dialect's from/to are addresses (the document's are account summaries).
        expect(tree.map((c) => ({ call_id: c.call_id, type: c.type, from: c.from, to: c.to, amount: c.amount, error: c.error }))).toEqual(
          ofTx.map((c) => ({ call_id: c.call_id, type: c.type, from: c.from, to: c.to, amount: c.amount, error: c.error })),
        );
        for (const call of tree) {
          if (call.parent_call_id === undefined) expect(call.level).toBe(0);
          else expect(call.level).toBe(tree.find((c) => c.call_id === call.parent_call_id)!.level + 1);
        }
        if (tx.status === "Fail") {
          failed += 1;
          const reverted = tree.filter((c) => c.reverted !== undefined);
          expect(reverted.map((c) => c.reverted!.message)).toEqual([ofTx[0]!.transaction_status!.fail_message]);
        }
        checked += 1;
      }
    }
  });

  it("transactionEventLogs: each transaction's logs, from every contract, also filtered by signature", async () => {
    let withLogs = 0;
    for (let block = RANGE.from; block < RANGE.from + 3; block++) {
      const logs = emitters().flatMap((contract) => sim.truth.accountEventLogs(contract, { from: block, to: block }));
      for (const tx of sim.truth.blockTransactions(block)) {
        const expected = logs.filter((l) => l.transaction_hash === tx.hash).sort((a, b) => a.log_index - b.log_index);
        const page = await client.transactionEventLogs({ transactionHash: tx.hash, size: 2000 });
        expect([...page.results].sort((a, b) => a.log_index - b.log_index)).toEqual(expected);
        if (expected.length === 0) continue;
        withLogs += 1;
        const topic = expected[0]!.topics[0]!;
        const filtered = await client.transactionEventLogs({ transactionHash: tx.hash, signature: topic });
        expect([...filtered.results].sort((a, b) => a.log_index - b.log_index)).toEqual(expected.filter((l: EventLog) => l.topics[0] === topic));
      }
    }
    expect(withLogs).toBeGreaterThan(5);
  });

  it("transactionNftTransfers: each transaction's NFT transfers", async () => {
    let withTransfers = 0;
    for (let block = RANGE.from; block < RANGE.from + 3; block++) {
      const transfers = sim.addresses.nftCollections.flatMap((c) => sim.truth.nftTransfers(c, { from: block, to: block }));
      for (const tx of sim.truth.blockTransactions(block)) {
        const expected = transfers.filter((t: NftTransfer) => t.transaction_hash === tx.hash).map(asClientTransfer);
        const page = await client.transactionNftTransfers({ transactionHash: tx.hash, size: 2000 });
        expect(page.results).toEqual(expected);
        if (expected.length > 0) withTransfers += 1;
      }
    }
    expect(withTransfers).toBeGreaterThan(2);
  });

  it("nftItem: holder, supply, burns and transfer count of tokens agree with the replayed transfers", async () => {
    let burned = 0;
    for (const collection of sim.addresses.nftCollections) {
      const history = transfersOf(collection);
      const tokens = replayTransfers(history);
      const supply = [...tokens.values()].reduce((sum, t) => sum + t.minted - t.burned, 0n);
      const contractType = history[0]!.contract.contract_type;
      const busiest = [...tokens].sort((a, b) => b[1].transfers - a[1].transfers)[0]![0];
      const gone = [...tokens].find(([, t]) => t.holders.size === 0 && t.burned > 0n)?.[0];
      for (const id of [busiest, gone, history.at(-1)!.token_id].filter((x): x is string => x !== undefined)) {
        const state = tokens.get(id)!;
        const item = (await client.nftItem({ tokenAddress: collection, tokenId: id })) as unknown as NftItem;
        expect(item.contract_type).toBe(contractType);
        expect(item.token_id).toBe(id);
        expect(item.info.contract_address).toBe(collection);
        expect(item.info.total_supply).toBe(supply.toString());
        expect(item.total_transfer).toBe(state.transfers);
        expect(item.total_burn).toBe(Number(state.burned));
        expect(item.is_burned).toBe(state.holders.size === 0 && state.burned > 0n);
        if (item.is_burned) burned += 1;
        if (contractType === "KIP37" || contractType === "ERC1155") {
          expect(item.total_supply).toBe((state.minted - state.burned).toString());
          expect(item.burn_amount).toBe(state.burned.toString());
          expect(item.holder).toBeUndefined();
        } else {
          expect(item.holder?.address).toBe([...state.holders.keys()][0]);
        }
        expect(item.metadata === undefined).toBe(item.token_uri === "");
        if (item.metadata) expect(item.metadata.token_id).toBe(id);
      }
    }
    expect(burned).toBeGreaterThan(0);
  });

  it("nftInventoryDetails: every (token, holder, count) of a collection, also by holder and by token id", async () => {
    for (const collection of [sim.addresses.busyCollection, sim.addresses.nftCollections[2]!]) {
      const tokens = replayTransfers(transfersOf(collection));
      const expected = [...tokens]
        .sort((a, b) => compareTokenIds(a[0], b[0]))
        .flatMap(([id, t]) => [...t.holders].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([holder, count]) => `${id} ${holder} ${count}`));
      expect(expected.length).toBeGreaterThan(20);
      const rows = (items: { token_id: string; holder: { address: string }; token_count?: string }[]) => items.map((r) => `${r.token_id} ${r.holder.address} ${r.token_count}`);
      expect(rows(await inventoryDetails({ tokenAddress: collection, size: 25 }))).toEqual(expected);

      const wallet = sim.addresses.busyWallet;
      const byHolder = await inventoryDetails({ tokenAddress: collection, keyword: wallet, size: 2000 });
      expect(rows(byHolder)).toEqual(expected.filter((row) => row.split(" ")[1] === wallet));
      const id = expected[expected.length - 1]!.split(" ")[0]!;
      const byToken = await inventoryDetails({ tokenAddress: collection, keyword: id });
      expect(rows(byToken)).toEqual(expected.filter((row) => row.split(" ")[0] === id));
    }
  });

  it("accountNftInventories: what the account holds in every collection; tokens without a URI only on request", async () => {
    const wallet = sim.addresses.busyWallet;
    const expected: string[] = [];
    const supplies = new Map<string, string>();
    for (const collection of sim.addresses.nftCollections) {
      const tokens = replayTransfers(transfersOf(collection));
      supplies.set(collection, [...tokens.values()].reduce((sum, t) => sum + t.minted - t.burned, 0n).toString());
      for (const [id, t] of [...tokens].sort((a, b) => compareTokenIds(a[0], b[0]))) {
        const count = t.holders.get(wallet);
        if (count !== undefined) expected.push(`${collection} ${id} ${count}`);
      }
    }
    const all = (await collect(client.paginate("accountNftInventories", { accountAddress: wallet, excludeIfTokenUriIsEmpty: false, size: 40 }))) as unknown as AccountNftInventory[];
    expect(all.map((r) => `${r.nft.contract_address} ${r.token_id} ${r.token_count}`)).toEqual(expected);
    for (const r of all) expect(r.nft.total_supply).toBe(supplies.get(r.nft.contract_address));

    const withoutUri = all.filter((r) => r.token_uri === "");
    expect(withoutUri.length).toBeGreaterThan(0);
    const byDefault = await collect(client.paginate("accountNftInventories", { accountAddress: wallet, size: 40 }));
    expect(byDefault).toEqual(all.filter((r) => r.token_uri !== ""));
  });
});

describe("paginate over the simulator", () => {
  it("walks every page of a window; oldest first, the records equal the truth", async () => {
    sim.resetStats();
    const token = sim.addresses.busyToken;
    const logs = await collect(client.paginate("accountEventLogs", { accountAddress: token, ...RANGE_PARAMS, size: 50 }));
    const truth = sim.truth.accountEventLogs(token, RANGE);
    expect(truth.length).toBeGreaterThan(150);
    expect([...logs].reverse()).toEqual(truth);

    const wallet = sim.addresses.busyWallet;
    const calls = await collect(client.paginate("accountInternalTransactions", { accountAddress: wallet, ...RANGE_PARAMS, size: 25 }));
    const callTruth = sim.truth.accountInternalTransactions(wallet, RANGE);
    expect(calls.sort(byCallPosition)).toEqual(callTruth);

    // One request per page, none past the end.
    const stats = sim.stats();
    expect(requestsOf(stats, "accountEventLogs")).toEqual({ "200": Math.ceil(truth.length / 50) });
    expect(requestsOf(stats, "accountInternalTransactions")).toEqual({ "200": Math.ceil(callTruth.length / 25) });
  });

  it("starts at params.page and uses the default size of 20", async () => {
    const token = sim.addresses.busyToken;
    const truth = sim.truth.accountEventLogs(token, RANGE);
    const pages: number[] = [];
    const logs: EventLog[] = [];
    for await (const page of client.paginate("accountEventLogs", { accountAddress: token, ...RANGE_PARAMS, page: 2 })) {
      pages.push(page.paging.current_page);
      logs.push(...page.results);
    }
    const totalPage = Math.ceil(truth.length / 20);
    expect(pages).toEqual(Array.from({ length: totalPage - 1 }, (_, i) => i + 2));
    expect(logs).toEqual(newestFirst(truth).slice(20));
  });

  it("blocks mined while a window is paged change nothing: its upper bound is fixed", async () => {
    const wallet = sim.addresses.busyWallet;
    const range = { from: sim.head() - 30, to: sim.head() };
    const before = sim.truth.accountInternalTransactions(wallet, range);
    const calls = [];
    for await (const page of client.paginate("accountInternalTransactions", { accountAddress: wallet, blockNumberStart: range.from, blockNumberEnd: range.to, size: 20 })) {
      calls.push(...page.results);
      sim.mine(2);
    }
    expect(sim.truth.accountInternalTransactions(wallet, { from: range.to + 1, to: sim.head() }).length).toBeGreaterThan(0);
    expect(calls.sort(byCallPosition)).toEqual(before);
  });

  // From the second page on, the paginator asks for the next page beside the one it awaits
  // (src/explorer/paginator.ts): a break at page 2 leaves page 3 asked, and no more. Whether
  // that request has reached the simulator when the loop ends is up to the machine's timing,
  // so it is waited for; a break at page 1 leaves nothing asked ahead.
  it("breaking out of the loop sends no further request than the one page asked ahead", async () => {
    const params = { accountAddress: sim.addresses.busyToken, ...RANGE_PARAMS, size: 10 };
    sim.resetStats();
    for await (const _page of client.paginate("accountEventLogs", params)) break;
    expect(requestsOf(sim.stats(), "accountEventLogs")).toEqual({ "200": 1 });

    sim.resetStats();
    for await (const page of client.paginate("accountEventLogs", params)) {
      if (page.paging.current_page === 2) break;
    }
    const sent = () => Object.values(requestsOf(sim.stats(), "accountEventLogs")).reduce((n, count) => n + count, 0);
    await waitFor(() => sent() >= 3, 10_000, "the page asked ahead to reach the simulator");
    expect(requestsOf(sim.stats(), "accountEventLogs")).toEqual({ "200": 3 });
  });
});

describe("exact numbers from the simulator", () => {
  it("KAIA amounts beyond 2^53 kei with 18 decimals come out exactly as the chain holds them", async () => {
    const wallet = sim.addresses.busyWallet;
    const calls = await collect(client.paginate("accountInternalTransactions", { accountAddress: wallet, ...RANGE_PARAMS, size: 2000 }));
    const truth = new Map(sim.truth.accountInternalTransactions(wallet, RANGE).map((c) => [`${c.transaction_hash}/${c.call_id}`, c.amount]));
    const big = calls.filter((c) => beyondFloat(c.amount));
    expect(big.length).toBeGreaterThan(10);
    for (const call of big) {
      expect(call.amount).toBe(truth.get(`${call.transaction_hash}/${call.call_id}`));
      // A float would have lost digits: the test is not vacuous.
      expect(String(Number(call.amount))).not.toBe(call.amount);
    }
    const tree = await client.transactionInternalTransactions({ transactionHash: big[0]!.transaction_hash! });
    expect(tree.results.find((c) => c.call_id === big[0]!.call_id)!.amount).toBe(big[0]!.amount);
  });

  it("token_count and total_supply sent as JSON integers come out as exact decimal strings", async () => {
    const multi = sim.addresses.nftCollections[2]!;
    const raw = await (await fetch(`${sim.url}/api/v1/nfts/${multi}/transfers?size=50`)).text();
    expect(raw).toMatch(/"token_count":[0-9]+[,}]/);
    const page = await client.nftTransfers({ tokenAddress: multi, size: 50 });
    const truth = newestFirst(sim.truth.nftTransfers(multi, wholeChain())).slice(0, 50);
    expect(page.results.map((t) => t.token_count)).toEqual(truth.map((t) => String(t.token_count)));
    expect(page.results.some((t) => Number(t.token_count) > 1)).toBe(true);

    const id = truth[0]!.token_id;
    const rawItem = await (await fetch(`${sim.url}/api/v1/nfts/${multi}/tokenids/${id}`)).text();
    expect(rawItem).toMatch(/"total_supply":[0-9]+[,}]/);
    const item = (await client.nftItem({ tokenAddress: multi, tokenId: id })) as unknown as NftItem;
    const state = replayTransfers(transfersOf(multi)).get(id)!;
    expect(item.total_supply).toBe((state.minted - state.burned).toString());
    expect(typeof item.info.total_supply).toBe("string");
  });

  it("token ids and KIP37 counts beyond 2^53 round-trip through transfers, the item, its metadata and the inventory", async () => {
    const own = await createSimulator({ seed: 12, initialBlocks: 3 });
    const ownClient = createExplorerClient(createTestCommon(), { baseUrl: own.url, requestsPerSecond: 1000 });
    try {
      const collection = own.addresses.busyCollection;
      const wallet = own.addresses.wallets[3]!;
      // Neighbouring ids that one float cannot tell apart.
      const ids = [123456789012345678901234567890n, 123456789012345678901234567891n];
      for (const id of ids) own.addBlock({ nftTransfers: [{ contract: { contract_address: collection, contract_type: "KIP17" }, token_id: id.toString(), from: ZERO_ADDRESS, to: wallet }] });
      let withMetadata = 0;
      for (const id of ids) {
        const transfers = await ownClient.nftTransfers({ tokenAddress: collection, tokenId: id });
        expect(transfers.results.map((t) => [t.token_id, t.to, t.token_count])).toEqual([[id.toString(), wallet, "1"]]);
        const item = (await ownClient.nftItem({ tokenAddress: collection, tokenId: id })) as unknown as NftItem;
        expect(item.token_id).toBe(id.toString());
        expect(item.holder?.address).toBe(wallet);
        if (item.metadata) {
          withMetadata += 1;
          expect(item.metadata.token_id).toBe(id.toString());
        }
      }
      expect(withMetadata).toBeGreaterThan(0);

      // A KIP37 mint of more than 2^53 units: the supply and the holder's count stay exact.
      const multi = own.addresses.nftCollections[2]!;
      const units = "99999999999999999999999";
      own.addBlock({ nftTransfers: [{ contract: { contract_address: multi, contract_type: "KIP37" }, token_id: "31000", token_count: units, from: ZERO_ADDRESS, to: wallet }] });
      const item = (await ownClient.nftItem({ tokenAddress: multi, tokenId: "31000" })) as unknown as NftItem;
      expect(item.total_supply).toBe(units);
      const inventory = (await collect(ownClient.paginate("accountNftInventories", { accountAddress: wallet, excludeIfTokenUriIsEmpty: false, size: 2000 }))) as unknown as AccountNftInventory[];
      expect(inventory.map((r) => r.token_id)).toEqual(expect.arrayContaining(ids.map(String)));
      expect(inventory.find((r) => r.nft.contract_address === multi && r.token_id === "31000")?.token_count).toBe(units);
    } finally {
      await ownClient.close();
      await own.close();
    }
  });
});

describe("credit meter against the simulator", () => {
  it("charges per operation exactly what the simulator charged: each cost per 2xx, nothing for errors", async () => {
    const fresh = createExplorerClient(createTestCommon(), { baseUrl: sim.url, requestsPerSecond: 1000, retryBaseMs: 1 });
    try {
      sim.resetStats();
      const a = sim.addresses;
      const block = RANGE.from;
      const tx = sim.truth.blockInternalTransactions(block)[0]!.transaction_hash!;
      const nft = sim.truth.nftTransfers(a.busyCollection, RANGE)[0]!;
      await collect(fresh.paginate("accountEventLogs", { accountAddress: a.busyToken, ...RANGE_PARAMS, size: 100 }));
      await fresh.accountNftTransfers({ accountAddress: a.busyWallet, ...RANGE_PARAMS });
      await fresh.nftTransfers({ tokenAddress: a.busyCollection, ...RANGE_PARAMS });
      await fresh.accountInternalTransactions({ accountAddress: a.busyWallet, ...RANGE_PARAMS });
      await fresh.blockInternalTransactions({ blockNumber: block });
      await fresh.blockInternalTransactions({ blockNumber: block + 1 });
      await fresh.transactionInternalTransactions({ transactionHash: tx });
      await fresh.transactionEventLogs({ transactionHash: tx });
      await fresh.transactionNftTransfers({ transactionHash: nft.transaction_hash });
      await fresh.nftItem({ tokenAddress: a.busyCollection, tokenId: nft.token_id });
      await collect(fresh.paginate("nftInventoryDetails", { tokenAddress: a.busyCollection, size: 100 }));
      await fresh.accountNftInventories({ accountAddress: a.busyWallet });
      // Errors the service does not charge: a 404 and a page past the last.
      await expect(fresh.transactionInternalTransactions({ transactionHash: `0x${"ab".repeat(32)}` })).rejects.toMatchObject({ status: 404 });
      await expect(fresh.accountEventLogs({ accountAddress: a.busyToken, ...RANGE_PARAMS, page: 10_000 })).rejects.toMatchObject({ status: 400 });

      const stats = sim.stats();
      expect(Object.keys(stats.credits).sort()).toEqual(Object.keys(OPERATIONS).sort());
      expect(fresh.meter.byOperation()).toEqual(stats.credits);
      expect(fresh.meter.spentToday()).toBe(stats.creditsTotal);
      for (const operation of Object.keys(OPERATIONS) as OperationName[]) {
        expect(stats.credits[operation], operation).toBe(OPERATIONS[operation].cost * (requestsOf(stats, operation)["200"] ?? 0));
      }
      expect(requestsOf(stats, "accountEventLogs")["400"]).toBe(1);
      expect(requestsOf(stats, "transactionInternalTransactions")["404"]).toBe(1);
    } finally {
      await fresh.close();
    }
  });
});
