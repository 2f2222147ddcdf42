import { describe, expect, it } from "vitest";
import { rpc } from "./http.js";
import { startSimulator } from "./start.js";

const hex = (n: number) => `0x${n.toString(16)}`;
const pad = (address: string) => `0x${"0".repeat(24)}${address.slice(2)}`;

interface Log {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  transactionIndex: string;
  logIndex: string;
  removed: boolean;
}

async function getLogs(url: string, filter: Record<string, unknown>, method = "eth_getLogs"): Promise<Log[]> {
  const answer = (await rpc(url, { jsonrpc: "2.0", id: 1, method, params: [filter] })) as { result?: Log[]; error?: unknown };
  if (answer.error !== undefined) throw new Error(JSON.stringify(answer.error));
  return answer.result as Log[];
}

describe("the simulator's eth_getLogs and kaia_getLogs", () => {
  it("answers every contract's logs exactly as its explorer's operation 11 lists them", async () => {
    const sim = await startSimulator({ seed: 11, initialBlocks: 40 });
    const from = sim.head() - 39;
    const to = sim.head();
    const contracts = [...sim.addresses.tokens, ...sim.addresses.nftCollections, ...sim.addresses.contracts];
    for (const contract of contracts) {
      const node = await getLogs(sim.rpcUrl, { fromBlock: hex(from), toBlock: hex(to), address: contract });
      const explorer = sim.truth.accountEventLogs(contract, { from, to });
      expect(node.map((l) => [Number(l.blockNumber), Number(l.logIndex), l.transactionHash, l.address, l.topics, l.data])).toEqual(
        explorer.map((l) => [l.block_number, l.log_index, l.transaction_hash, l.contract_address, l.topics, l.data]),
      );
      expect(node.every((l) => l.removed === false && /^0x[0-9a-f]{64}$/.test(l.blockHash))).toBe(true);
    }
  });

  it("reads an address list and topic lists as 'or', null as any, the same from kaia_getLogs", async () => {
    const sim = await startSimulator({ seed: 12, initialBlocks: 30 });
    const range = { fromBlock: hex(sim.head() - 29), toBlock: "latest" };
    const all = await getLogs(sim.rpcUrl, range);
    expect(all.length).toBeGreaterThan(100);
    const [a, b] = sim.addresses.tokens as [string, string];
    const both = await getLogs(sim.rpcUrl, { ...range, address: [a, b.toUpperCase().replace("0X", "0x")] });
    expect(both).toEqual(all.filter((l) => l.address === a || l.address === b));
    const wallet = sim.addresses.busyWallet;
    const toWallet = await getLogs(sim.rpcUrl, { ...range, topics: [null, null, [pad(wallet)]] });
    expect(toWallet.length).toBeGreaterThan(0);
    expect(toWallet).toEqual(all.filter((l) => l.topics[2] === pad(wallet)));
    const fromOrTo = await getLogs(sim.rpcUrl, { ...range, topics: [[all[0]!.topics[0]!, all[1]!.topics[0]!], pad(wallet)] }, "kaia_getLogs");
    expect(fromOrTo).toEqual(all.filter((l) => (l.topics[0] === all[0]!.topics[0] || l.topics[0] === all[1]!.topics[0]) && l.topics[1] === pad(wallet)));
    // Log indexes count the logs of a block, in transaction order.
    for (const block of new Set(all.map((l) => l.blockNumber))) {
      const ofBlock = all.filter((l) => l.blockNumber === block);
      expect(ofBlock.map((l) => Number(l.logIndex))).toEqual(ofBlock.map((_, i) => i));
      expect(ofBlock.map((l) => Number(l.transactionIndex))).toEqual([...ofBlock.map((l) => Number(l.transactionIndex))].sort((x, y) => x - y));
    }
  });

  it("shows each NFT transfer of the explorer as its contract's log, chosen ones included", async () => {
    const sim = await startSimulator({ seed: 13, initialBlocks: 5 });
    const wallets = sim.addresses.wallets;
    const kip17 = sim.addresses.nftCollections[0]!;
    const block = sim.addBlock({
      eventLogs: [{}],
      nftTransfers: [
        { contract: { contract_address: kip17, contract_type: "KIP17" }, token_id: "5", from: wallets[1]!, to: wallets[2]! },
        { contract: { contract_address: sim.addresses.kip37Collection, contract_type: "KIP37" }, token_id: "7", token_count: "3", from: wallets[2]!, to: wallets[3]! },
      ],
    });
    const logs = await getLogs(sim.rpcUrl, { fromBlock: hex(block), toBlock: hex(block) });
    expect(logs.map((l) => [l.address, l.topics.length, Number(l.logIndex)])).toEqual([
      [sim.addresses.tokens[0], 3, 0],
      [kip17, 4, 1],
      [sim.addresses.kip37Collection, 4, 2],
    ]);
    expect(logs[1]!.topics.slice(1)).toEqual([pad(wallets[1]!), pad(wallets[2]!), `0x${"5".padStart(64, "0")}`]);
    expect(logs[2]!.data).toBe(`0x${"7".padStart(64, "0")}${"3".padStart(64, "0")}`);
  });

  it("answers Kaia's errors past its result and time limits, and a gateway's past its range limit, all live settings", async () => {
    const sim = await startSimulator({ seed: 15, initialBlocks: 10 });
    const range = { fromBlock: hex(sim.head() - 9), toBlock: hex(sim.head()) };
    const all = await getLogs(sim.rpcUrl, range);
    const error = async (filter: Record<string, unknown>) => ((await rpc(sim.rpcUrl, { jsonrpc: "2.0", id: 1, method: "kaia_getLogs", params: [filter] })) as { error?: { code: number; message: string } }).error;
    sim.setFaults({ logResultLimit: all.length });
    expect(await getLogs(sim.rpcUrl, range)).toEqual(all);
    sim.setFaults({ logResultLimit: all.length - 1 });
    expect(await error(range)).toEqual({ code: -32000, message: `query returned more than ${all.length - 1} results` });
    sim.setFaults({ logResultLimit: undefined, logTimeoutBlocks: 9 });
    expect(await error(range)).toEqual({ code: -32000, message: "query timeout exceeded" });
    sim.setFaults({ logTimeoutBlocks: undefined, logBlockRangeLimit: 5 });
    expect(await error(range)).toEqual({ code: -32000, message: "exceed maximum block range: 5" });
    expect(await getLogs(sim.rpcUrl, { ...range, fromBlock: hex(sim.head() - 4) })).toEqual(all.filter((l) => Number(l.blockNumber) >= sim.head() - 4));
  });

  it("answers a malformed filter with the node's invalid-argument error", async () => {
    const sim = await startSimulator({ seed: 14, initialBlocks: 2 });
    const bad = (await rpc(sim.rpcUrl, { jsonrpc: "2.0", id: 1, method: "eth_getLogs", params: [{ address: "0x12" }] })) as { error: { code: number } };
    expect(bad.error.code).toBe(-32602);
  });
});
