import { afterEach, describe, expect, it } from "vitest";
import { createEventDecoder } from "../../src/chain/event-abi.js";
import { createLogReader } from "../../src/chain/get-logs.js";
import { createJsonRpc, type JsonRpc } from "../../src/chain/json-rpc.js";
import { eventLogOf, nftTransfersOf } from "../../src/chain/log-records.js";
import { createTestCommon } from "../../src/common/common.js";
import { startSimulator } from "../simulator/start.js";

const clients: JsonRpc[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function client(url: string): JsonRpc {
  const rpc = createJsonRpc(createTestCommon(), { rpcUrl: url, maxRetries: 0 });
  clients.push(rpc);
  return rpc;
}

const signal = new AbortController().signal;

describe("createLogReader on the simulator", () => {
  it("reads every contract's logs in one query, the explorer's records of them field for field", async () => {
    const sim = await startSimulator({ seed: 21, initialBlocks: 30 });
    const range = { from: sim.head() - 29, to: sim.head() };
    const contracts = [...sim.addresses.tokens, ...sim.addresses.nftCollections, ...sim.addresses.contracts];
    const reader = createLogReader(createTestCommon(), { rpc: client(sim.rpcUrl) });
    const logs = await reader.read(range, [{ address: contracts }], signal);
    const decoder = createEventDecoder(["Deposit(address indexed dst, uint256 wad)"]);
    for (const contract of contracts) {
      const explorer = sim.truth.accountEventLogs(contract, range).map(({ estimated_event_log: _, ...log }) => log);
      expect(logs.filter((l) => l.address === contract).map((l) => eventLogOf(l, decoder))).toEqual(explorer);
    }
  });

  it("reads the explorer's NFT transfers of every collection from their logs", async () => {
    const sim = await startSimulator({ seed: 22, initialBlocks: 30 });
    const range = { from: sim.head() - 29, to: sim.head() };
    const reader = createLogReader(createTestCommon(), { rpc: client(sim.rpcUrl), maxAddresses: 1 });
    const logs = await reader.read(range, [{ address: sim.addresses.nftCollections }], signal);
    for (const collection of sim.addresses.nftCollections) {
      const explorer = sim.truth.nftTransfers(collection, range).map((t) => ({ ...t, contract: { contract_address: t.contract.contract_address }, token_count: String(t.token_count), fee_payer: undefined }));
      const node = logs.filter((l) => l.address === collection).flatMap((l) => nftTransfersOf(l, sim.truth.blockDatetime(l.blockNumber)!));
      expect(node.map((t) => ({ ...t, fee_payer: undefined }))).toEqual(explorer);
    }
  });
});
