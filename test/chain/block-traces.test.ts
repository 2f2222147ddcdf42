/**
 * Internal transactions read from the node's call tracer (debug_traceBlockByNumber) against
 * the same blocks read from the explorer (operation 8), on the simulator: the same identity,
 * the same values for every field a rule reads; a node without the debug namespace said once;
 * a malformed trace refused with a KW_RPC_ code.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BLOCK_TRACE_METHOD, NodeTraceError, NodeTracesUnavailableError, createBlockTracesReader } from "../../src/chain/block-traces.js";
import { createJsonRpc, type JsonRpc } from "../../src/chain/json-rpc.js";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import type { InternalTransactionListItem } from "../../src/explorer/types.js";
import { internalTransactions } from "../../src/families/internal-transactions.js";
import type { WatchedRecord } from "../../src/model/record.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";

let sim: Simulator;
let client: ExplorerClient;
let rpc: JsonRpc;

beforeAll(async () => {
  sim = await createSimulator({ seed: 23, initialBlocks: 60, indexingLagBlocks: 0 });
  client = createExplorerClient(createTestCommon(), { baseUrl: sim.url, requestsPerSecond: 1000, retryBaseMs: 1 });
  rpc = createJsonRpc(createTestCommon(), { rpcUrl: sim.rpcUrl, maxBytes: 16 * 1024 * 1024, retryBaseMs: 1 });
});
afterAll(async () => {
  await client?.close();
  await rpc?.close();
  await sim?.close();
});

async function fromExplorer(block: number): Promise<InternalTransactionListItem[]> {
  const out: InternalTransactionListItem[] = [];
  for await (const page of client.paginate("blockInternalTransactions", { blockNumber: block, size: 2000 })) out.push(...page.results);
  return out;
}

const normalize = internalTransactions.normalize as (raw: InternalTransactionListItem) => WatchedRecord;
/** The fields rules read, prepared as the compiled conditions compare them. */
const RULE_FIELDS = ["type", "from", "to", "amount", "status", "failed", "error", "method_id", "call_id", "block", "transaction"] as const;
function ruleValues(record: InternalTransactionListItem): Record<string, unknown> {
  const normalized = normalize(record);
  return Object.fromEntries(RULE_FIELDS.map((name) => [name, internalTransactions.fields[name]!.prepare!(normalized)]));
}

describe("internal transactions from the node's traces", () => {
  it("every block: the explorer's records under the same keys, with the same values for every field rules read, in the same order", async () => {
    const reader = createBlockTracesReader(createTestCommon(), { rpc });
    let shared = 0;
    let failed = 0;
    let moving = 0;
    let topLevelOnly = 0;
    for (let block = sim.head() - 59; block <= sim.head(); block++) {
      const explorer = await fromExplorer(block);
      const node = await reader.read(block, new AbortController().signal);
      const explorerByKey = new Map(explorer.map((r) => [normalize(r).key, r]));
      const nodeKeys = node.map((r) => normalize(r).key);
      expect(new Set(nodeKeys).size, `block ${block}: keys are unique`).toBe(nodeKeys.length);
      // Operation 8's order (transaction index descending, call id ascending) on both sides.
      expect(nodeKeys, `block ${block}: order`).toEqual([...explorerByKey.keys()]);
      const callsOfTx = new Map<string | undefined, number>();
      for (const record of node) callsOfTx.set(record.transaction_hash, (callsOfTx.get(record.transaction_hash) ?? 0) + 1);
      for (const record of node) {
        const key = normalize(record).key;
        const theirs = explorerByKey.get(key);
        expect(theirs, `block ${block}: the explorer has ${key}`).toBeDefined();
        if (theirs === undefined) continue;
        // An NFT or token transfer made no internal call: its top-level frame is its only record, on both sides.
        if (callsOfTx.get(record.transaction_hash) === 1) topLevelOnly++;
        shared++;
        expect(ruleValues(record), key).toEqual(ruleValues(theirs));
        expect({ index: record.transaction_index, datetime: record.datetime, fail: record.transaction_status?.fail_message }, key).toEqual({ index: theirs.transaction_index, datetime: theirs.datetime, fail: theirs.transaction_status?.fail_message });
        if (ruleValues(record).failed === true) failed++;
        if (record.amount !== "0") moving++;
      }
      expect(nodeKeys.length, `block ${block}: the node has every record of the explorer, and no other`).toBe(explorer.length);
    }
    // Enough of each kind that the comparison means something.
    expect(shared).toBeGreaterThan(400);
    expect(failed).toBeGreaterThan(20);
    expect(moving).toBeGreaterThan(100);
    expect(topLevelOnly).toBeGreaterThan(50);
    expect(reader.available).toBe(true);
  });

  it("one request a block, and a block without transactions costs no more", async () => {
    const common = createTestCommon();
    const own = createJsonRpc(common, { rpcUrl: sim.rpcUrl, maxBytes: 16 * 1024 * 1024 });
    try {
      const reader = createBlockTracesReader(common, { rpc: own, blockTime: async () => 1_700_000_000 });
      sim.resetStats();
      const records = await reader.read(sim.head() - 3, new AbortController().signal);
      expect(records.length).toBeGreaterThan(0);
      expect(records.every((r) => r.datetime === "2023-11-14T22:13:20.000Z")).toBe(true);
      expect(sim.stats().rpcMethods).toEqual({ [BLOCK_TRACE_METHOD]: 1 });
      const empty = sim.addBlock({});
      expect(await reader.read(empty, new AbortController().signal)).toEqual([]);
      expect(sim.stats().rpcMethods).toEqual({ [BLOCK_TRACE_METHOD]: 2 });
      expect(await common.metrics.registry.getSingleMetricAsString("kaiawatch_node_block_traces_total")).toContain('outcome="ok"} 2');
    } finally {
      await own.close();
    }
  });

  it("a node without the debug namespace: the probe says so, a read throws KW_RPC_TRACES_UNAVAILABLE, and it is asked once", async () => {
    sim.setFaults({ debugUnavailable: true });
    try {
      const reader = createBlockTracesReader(createTestCommon(), { rpc });
      sim.resetStats();
      expect(await reader.probe(sim.head(), new AbortController().signal)).toEqual({ available: false, reason: "the method debug_traceBlockByNumber does not exist/is not available" });
      expect(reader.available).toBe(false);
      const read = reader.read(sim.head(), new AbortController().signal);
      await expect(read).rejects.toBeInstanceOf(NodeTracesUnavailableError);
      await expect(read).rejects.toMatchObject({ code: "KW_RPC_TRACES_UNAVAILABLE", message: expect.stringContaining("does not serve debug_traceBlockByNumber (the method debug_traceBlockByNumber does not exist/is not available)") });
      expect(sim.stats().rpcMethods).toEqual({ [BLOCK_TRACE_METHOD]: 1 });
    } finally {
      sim.setFaults({ debugUnavailable: false });
    }
    const served = await createBlockTracesReader(createTestCommon(), { rpc }).probe(sim.head() - 1, new AbortController().signal);
    expect(served).toMatchObject({ available: true, block: sim.head() - 1 });
    expect(served.available && served.transactions > 0 && served.calls >= served.transactions).toBe(true);
  });
});

describe("the reader is strict about the trace", () => {
  let answer: unknown;
  let server: Server;
  let node: JsonRpc;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, ...(answer as object) })));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    node = createJsonRpc(createTestCommon(), { rpcUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxRetries: 0 });
  });
  afterAll(async () => {
    await node?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const A = `0x${"aa".repeat(20)}`;
  const B = `0x${"BB".repeat(20)}`;
  const C = `0x${"cc".repeat(20)}`;
  const HASH = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
  const read = (result: unknown) => {
    answer = { result };
    return createBlockTracesReader(createTestCommon(), { rpc: node, blockTime: async () => 1_700_000_000 }).read(100, new AbortController().signal);
  };

  it("numbers a transaction's calls in pre-order from its top-level frame, and reads Kaia's fields", async () => {
    const records = await read([
      { txHash: HASH(1), result: { type: "CALL", from: A, to: B, value: "0x0", input: "0x", gas: "0x5208", gasUsed: "0x5208" } },
      {
        txHash: HASH(2),
        result: {
          type: "CALL", from: A, to: B, value: "0xde0b6b3a7640000", input: "0xa9059cbb00", error: "execution reverted", revertReason: "no", reverted: { contract: B, message: "not enough" }, somethingNew: 1,
          calls: [
            { type: "STATICCALL", from: B, to: C, input: "0x70a08231", calls: [{ type: "CALL", from: C, to: A, value: "0x1" }] },
            { type: "CREATE2", from: B, value: "0x0", input: "0x6080604052", error: "execution reverted" },
          ],
        },
      },
    ]);
    expect(records.map((r) => [r.transaction_index, r.call_id, r.type])).toEqual([[1, 0, "CALL"], [1, 1, "STATICCALL"], [1, 2, "CALL"], [1, 3, "CREATE2"], [0, 0, "CALL"]]);
    const [top, staticCall, deep, create, plain] = records;
    expect(top).toEqual({ call_id: 0, block_id: 100, transaction_hash: HASH(2), transaction_index: 1, datetime: "2023-11-14T22:13:20.000Z", type: "CALL", from: A, to: B.toLowerCase(), amount: "1", error: "execution reverted", method_id: "0xa9059cbb", transaction_status: { status: "Fail", fail_message: "not enough" } });
    expect(staticCall).toMatchObject({ amount: "0", method_id: "0x70a08231", transaction_status: { status: "Fail" } });
    expect(deep).toMatchObject({ amount: "0.000000000000000001", from: C, to: A });
    expect(deep).not.toHaveProperty("method_id");
    expect(create).toMatchObject({ type: "CREATE2", error: "execution reverted", method_id: "0x60806040" });
    expect(create).not.toHaveProperty("to");
    expect(plain).toMatchObject({ call_id: 0, transaction_index: 0, amount: "0", transaction_status: { status: "Success" } });
  });

  it("refuses what it cannot read with KW_RPC_TRACE and the place", async () => {
    const frame = { type: "CALL", from: A, to: B, value: "0x0", input: "0x" };
    const cases: [unknown, RegExp][] = [
      [null, /block 100: the answer is null, not a list of transaction traces/],
      [[{ result: frame }], /\[0\]\.txHash is missing/],
      [[{ txHash: HASH(1), error: "execution timeout" }], /\[0\] \(transaction 0x0+1\): the node could not trace it: "execution timeout"/],
      [[{ txHash: HASH(1), result: { ...frame, type: "call" } }], /\[0\]\.result\.type is "call", not a call type/],
      [[{ txHash: HASH(1), result: { ...frame, from: "0x12" } }], /\[0\]\.result\.from is "0x12", not an address/],
      [[{ txHash: HASH(1), result: { ...frame, value: 5 } }], /\[0\]\.result\.value is 5, not a hex quantity/],
      [[{ txHash: HASH(1), result: { ...frame, calls: [{ ...frame, input: "0xabc" }] } }], /\[0\]\.result\.calls\[0\]\.input is "0xabc", not hex bytes/],
      [[{ txHash: HASH(1), result: { ...frame, calls: {} } }], /\[0\]\.result\.calls is \{\}, not a list of call frames/],
    ];
    for (const [result, message] of cases) {
      const attempt = read(result);
      await expect(attempt).rejects.toBeInstanceOf(NodeTraceError);
      await expect(attempt).rejects.toMatchObject({ code: "KW_RPC_TRACE", message });
    }
  });

  it("passes a node's other errors on as they are (the next tick asks again)", async () => {
    answer = { error: { code: -32000, message: "heavy debug api requests exceed the limit: 1" } };
    const reader = createBlockTracesReader(createTestCommon(), { rpc: node });
    await expect(reader.read(100, new AbortController().signal)).rejects.toMatchObject({ code: "KW_RPC_CALL" });
    expect(reader.available).toBeUndefined();
  });
});
