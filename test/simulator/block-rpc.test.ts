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

describe("the simulator's block traces (debug_traceBlockByNumber, callTracer)", () => {
  it("answers one {txHash, result} per transaction in block order, each a call frame tree as Kaia's tracer writes it", async () => {
    const sim = await startSimulator({ seed: 5, initialBlocks: 12 });
    const call = async (params: unknown[]) => (await rpc(sim.rpcUrl, { jsonrpc: "2.0", id: 1, method: "debug_traceBlockByNumber", params })) as { result?: Array<{ txHash: string; result: Record<string, unknown> }>; error?: { code: number; message: string } };
    const block = sim.head() - 1;
    const receipts = ((await rpc(sim.rpcUrl, { jsonrpc: "2.0", id: 2, method: "kaia_getBlockReceipts", params: [hex(block)] })) as { result: Array<{ transactionHash: string }> }).result;
    const { result } = await call([hex(block), { tracer: "callTracer" }]);
    expect(result!.map((t) => t.txHash)).toEqual(receipts.map((r) => r.transactionHash));
    const frames: Record<string, unknown>[] = [];
    const walk = (f: Record<string, unknown>) => {
      frames.push(f);
      for (const c of (f.calls as Record<string, unknown>[] | undefined) ?? []) walk(c);
    };
    for (const t of result!) walk(t.result);
    for (const f of frames) {
      expect(f.type).toMatch(/^(CALL|STATICCALL|DELEGATECALL|CREATE)$/);
      expect(f.from).toMatch(/^0x[0-9a-f]{40}$/);
      expect(f.input).toMatch(/^0x([0-9a-f]{2})*$/);
      if (f.type === "STATICCALL") expect(f).not.toHaveProperty("value");
      else expect(f.value).toMatch(/^0x[0-9a-f]+$/);
    }
    expect(frames.length).toBeGreaterThan(result!.length);
    expect((await call([hex(block), {}])).error).toMatchObject({ code: -32602 });
    expect((await call([hex(sim.head() + 5), { tracer: "callTracer" }])).error).toEqual({ code: -32000, message: `block #${sim.head() + 5} not found` });
    sim.setFaults({ debugUnavailable: true });
    expect((await call([hex(block), { tracer: "callTracer" }])).error).toMatchObject({ code: -32601 });
  });
});
