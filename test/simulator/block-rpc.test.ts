import { describe, expect, it } from "vitest";
import { rpc } from "./http.js";
import { startSimulator } from "./start.js";

const hex = (n: number) => `0x${n.toString(16)}`;

describe("the simulator's blocks over JSON-RPC", () => {
  it("gives a block one hash: in the block, as the next block's parent and in its transactions' receipts", async () => {
    const sim = await startSimulator({ seed: 5, initialBlocks: 3 });
    const block = sim.addBlock({ internalTransactions: [{ from: `0x${"a1".repeat(20)}`, to: `0x${"b1".repeat(20)}`, amount: "1", type: "CALL", transaction_status: { status: "Success" } }] });
    sim.addBlock({});
    const byNumber = async (n: number) => ((await rpc(sim.rpcUrl, { jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: [hex(n), false] })) as { result: { hash: string; parentHash: string } }).result;
    const receipts = ((await rpc(sim.rpcUrl, { jsonrpc: "2.0", id: 2, method: "kaia_getBlockReceipts", params: [hex(block)] })) as { result: Array<{ blockHash: string }> }).result;
    const { hash } = await byNumber(block);
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await byNumber(block + 1)).parentHash).toBe(hash);
    expect(receipts.length).toBeGreaterThan(0);
    expect(receipts.map((r) => r.blockHash)).toEqual(receipts.map(() => hash));
  });
});
