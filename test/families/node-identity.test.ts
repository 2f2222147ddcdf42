import { afterEach, describe, expect, it } from "vitest";
import { createEventDecoder } from "../../src/chain/event-abi.js";
import { createLogReader, type LogFilter, type NodeLog } from "../../src/chain/get-logs.js";
import { createJsonRpc, type JsonRpc } from "../../src/chain/json-rpc.js";
import { eventLogOf, nftTransfersOf } from "../../src/chain/log-records.js";
import { eventTopic } from "../../src/chain/signatures.js";
import { createTestCommon } from "../../src/common/common.js";
import type { EventLog, NftTransfer } from "../../src/explorer/types.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { NORMALIZERS, prepareWindow } from "../../src/watch/normalize.js";

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of opened.splice(0).reverse()) await c.close();
});

const TRANSFER = eventTopic("Transfer(address,address,uint256)");
const SINGLE = eventTopic("TransferSingle(address,address,address,uint256,uint256)");
const BATCH = eventTopic("TransferBatch(address,address,address,uint256[],uint256[])");
const pad = (address: string) => `0x${"0".repeat(24)}${address.slice(2)}`;

/** The identity keys the daemon gives a window's records (twins numbered), sorted. */
function eventKeys(records: EventLog[], range: { from: number; to: number }): string[] {
  return prepareWindow(records.map((r) => NORMALIZERS.event_logs(r)), range.from, range.to).records.map((r) => r.key).sort();
}
function nftKeys(records: NftTransfer[], range: { from: number; to: number }): string[] {
  return prepareWindow(records.map((r) => NORMALIZERS.nft_transfers(r)), range.from, range.to).records.map((r) => r.key).sort();
}

/** A seeded chain with the records that test identity hardest: KIP-37 twins in one transaction, a chosen KIP-17 mint. */
async function chain(): Promise<{ sim: Simulator; rpc: JsonRpc; range: { from: number; to: number } }> {
  const sim = await createSimulator({ seed: 31, initialBlocks: 40 });
  opened.push(sim);
  const from = sim.head() - 39;
  const [w2, w3] = [sim.addresses.wallets[2] as string, sim.addresses.wallets[3] as string];
  const twin = { transaction_hash: `0x${"ab".repeat(32)}`, contract: { contract_address: sim.addresses.kip37Collection, contract_type: "KIP37" }, token_id: "7", token_count: "5", from: w2, to: w3 };
  sim.addBlock({ nftTransfers: [twin, twin, { ...twin, token_count: "6" }, { contract: { contract_address: sim.addresses.nftCollections[0] as string, contract_type: "KIP17" }, token_id: "900", from: `0x${"0".repeat(40)}`, to: w2 }] });
  sim.mine(5);
  const rpc = createJsonRpc(createTestCommon(), { rpcUrl: sim.rpcUrl, maxRetries: 0 });
  opened.push(rpc);
  return { sim, rpc, range: { from, to: sim.head() } };
}

describe("a node-read record has the identity of the explorer's record of the same log", () => {
  it("event logs of every contract: the same keys, nothing extra on either side", async () => {
    const { sim, rpc, range } = await chain();
    const contracts = [...sim.addresses.tokens, ...sim.addresses.nftCollections, ...sim.addresses.contracts, ...sim.addresses.wallets];
    const logs = await createLogReader(createTestCommon(), { rpc }).read(range, [{ address: contracts }], new AbortController().signal);
    const decoder = createEventDecoder([]);
    let compared = 0;
    for (const contract of contracts) {
      const explorer = eventKeys(sim.truth.accountEventLogs(contract, range), range);
      const node = eventKeys(logs.filter((l) => l.address === contract).map((l) => eventLogOf(l, decoder)), range);
      expect(node, contract).toEqual(explorer);
      compared += explorer.length;
    }
    expect(compared).toBeGreaterThan(300);
  });

  it("NFT transfers of every collection and of every account (one log query by topic positions), twins numbered alike", async () => {
    const { sim, rpc, range } = await chain();
    const reader = createLogReader(createTestCommon(), { rpc });
    const signal = new AbortController().signal;
    const datetimeOf = (log: NodeLog) => sim.truth.blockDatetime(log.blockNumber) as string;
    const collections = sim.addresses.nftCollections;
    const ofCollections = await reader.read(range, [{ address: collections, topics: [[TRANSFER, SINGLE, BATCH]] }], signal);
    let compared = 0;
    for (const collection of collections) {
      const explorer = nftKeys(sim.truth.nftTransfers(collection, range), range);
      const node = nftKeys(ofCollections.filter((l) => l.address === collection).flatMap((l) => nftTransfersOf(l, datetimeOf(l))), range);
      expect(node, collection).toEqual(explorer);
      compared += explorer.length;
    }
    expect(compared).toBeGreaterThan(100);
    expect(nftKeys(sim.truth.nftTransfers(sim.addresses.kip37Collection, range), range).filter((k) => k.includes("#")).length).toBeGreaterThan(0);

    const accounts = sim.addresses.wallets;
    const topics = accounts.map(pad);
    // An account's transfers: KIP-17 Transfer with it as topic 1 or 2, KIP-37 with it as topic 2 or 3.
    const filters: LogFilter[] = [
      { topics: [[TRANSFER], topics] },
      { topics: [[TRANSFER], null, topics] },
      { topics: [[SINGLE, BATCH], null, topics] },
      { topics: [[SINGLE, BATCH], null, null, topics] },
    ];
    const ofAccounts = (await reader.read(range, filters, signal)).flatMap((l) => nftTransfersOf(l, datetimeOf(l)));
    let accountsCompared = 0;
    for (const account of accounts) {
      const explorer = nftKeys(sim.truth.accountNftTransfers(account, range), range);
      const node = nftKeys(ofAccounts.filter((t) => t.from === account || t.to === account), range);
      expect(node, account).toEqual(explorer);
      accountsCompared += explorer.length;
    }
    expect(accountsCompared).toBeGreaterThan(100);
  });
});
