import { afterEach, describe, expect, it } from "vitest";
import { createEventDecoder } from "../../src/chain/event-abi.js";
import { createLogReader, KAIA_MAX_REQUEST_BYTES, logQueryBatches, logQueryBytes, type NodeLog } from "../../src/chain/get-logs.js";
import { createJsonRpc, type JsonRpc } from "../../src/chain/json-rpc.js";
import { eventLogOf, nftTransfersOf } from "../../src/chain/log-records.js";
import { createTestCommon, type Common } from "../../src/common/common.js";
import { startFixtureServer, type FixtureServer } from "../explorer/fixture-server.js";
import { startSimulator } from "../simulator/start.js";

const clients: JsonRpc[] = [];
const servers: FixtureServer[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function client(url: string, extra: { maxBytes?: number } = {}): JsonRpc {
  const rpc = createJsonRpc(createTestCommon(), { rpcUrl: url, maxRetries: 0, ...extra });
  clients.push(rpc);
  return rpc;
}

async function fixture(): Promise<FixtureServer> {
  const server = await startFixtureServer();
  servers.push(server);
  return server;
}

async function counts(common: Common): Promise<Record<string, number>> {
  const metric = await common.metrics.nodeLogQueries.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}

/** The block ranges and address counts of the log queries a fixture or simulator saw. */
function asked(bodies: string[]): string[] {
  return bodies.map((body) => {
    const filter = (JSON.parse(body) as { params: [{ fromBlock: string; toBlock: string; address?: string[] }] }).params[0];
    return `${Number(filter.fromBlock)}-${Number(filter.toBlock)}${filter.address ? `×${filter.address.length}` : ""}`;
  });
}

const HASH = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const A = `0x${"aa".repeat(20)}`;
function rawLog(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { address: A, topics: [HASH(1)], data: "0x", blockNumber: "0x64", transactionHash: HASH(2), transactionIndex: "0x0", blockHash: HASH(3), logIndex: "0x0", removed: false, ...extra };
}
const answer = (logs: unknown) => ({ body: { jsonrpc: "2.0", id: 1, result: logs } });
const refusal = (message: string) => ({ body: { jsonrpc: "2.0", id: 1, error: { code: -32000, message } } });

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
    // Room for one address a query: a query per collection.
    const reader = createLogReader(createTestCommon(), { rpc: client(sim.rpcUrl), maxRequestBytes: 250 });
    const logs = await reader.read(range, [{ address: sim.addresses.nftCollections }], signal);
    for (const collection of sim.addresses.nftCollections) {
      const explorer = sim.truth.nftTransfers(collection, range).map((t) => ({ ...t, contract: { contract_address: t.contract.contract_address }, token_count: String(t.token_count), fee_payer: undefined }));
      const node = logs.filter((l) => l.address === collection).flatMap((l) => nftTransfersOf(l, sim.truth.blockDatetime(l.blockNumber)!));
      expect(node.map((t) => ({ ...t, fee_payer: undefined }))).toEqual(explorer);
    }
  });
});

describe("createLogReader against a node's limits", () => {
  it("halves the range on Kaia's result limit and its time limit, and loses nothing", async () => {
    const sim = await startSimulator({ seed: 23, initialBlocks: 16, logResultLimit: 20 });
    const range = { from: sim.head() - 15, to: sim.head() };
    const common = createTestCommon();
    const reader = createLogReader(common, { rpc: client(sim.rpcUrl) });
    sim.setFaults({ logResultLimit: 0 });
    const all = await createLogReader(createTestCommon(), { rpc: client(sim.rpcUrl) }).read(range, [{}], signal);
    expect(all.length).toBeGreaterThan(60);
    sim.setFaults({ logResultLimit: 20 });
    expect(await reader.read(range, [{}], signal)).toEqual(all);
    expect((await counts(common)).split).toBeGreaterThan(0);
    sim.setFaults({ logResultLimit: 0, logTimeoutBlocks: 3 });
    expect(await reader.read(range, [{}], signal)).toEqual(all);
  });

  it("learns a gateway's block range limit from its answer and asks in ranges that fit from then on", async () => {
    const server = await fixture();
    server.enqueue(refusal("exceed maximum block range: 4"));
    server.setDefault(answer([]));
    const reader = createLogReader(createTestCommon(), { rpc: client(server.url) });
    await reader.read({ from: 100, to: 109 }, [{ address: [A] }], signal);
    await reader.read({ from: 110, to: 115 }, [{ address: [A] }], signal);
    expect(asked(server.requests.map((r) => r.body))).toEqual(["100-109×1", "100-103×1", "104-107×1", "108-109×1", "110-113×1", "114-115×1"]);
  });

  it("splits the address list of one block, then says when one block of one address is still too much", async () => {
    const server = await fixture();
    const B = `0x${"bb".repeat(20)}`;
    const C = `0x${"cc".repeat(20)}`;
    const tooMany = refusal("query returned more than 10000 results");
    // Block 100 holds more than the limit of any two of A, B and C together; block 101 is empty.
    server.setDefault((request) => {
      const filter = (JSON.parse(request.body) as { params: [{ fromBlock: string; toBlock: string; address: string[] }] }).params[0];
      if (filter.fromBlock !== filter.toBlock) return tooMany;
      if (filter.fromBlock === "0x65") return answer([]);
      if (filter.address.length > 1) return tooMany;
      const index = [A, B, C].indexOf(filter.address[0] as string);
      return answer([rawLog({ address: filter.address[0], logIndex: `0x${index.toString(16)}` })]);
    });
    const reader = createLogReader(createTestCommon(), { rpc: client(server.url) });
    const logs = await reader.read({ from: 100, to: 101 }, [{ address: [A, B, C] }], signal);
    expect(logs.map((l) => l.address)).toEqual([A, B, C]);
    expect(asked(server.requests.map((r) => r.body))).toEqual(["100-101×3", "100-100×3", "100-100×2", "100-100×1", "100-100×1", "100-100×1", "101-101×3"]);

    server.setDefault(tooMany);
    const failure = reader.read({ from: 100, to: 100 }, [{ address: [A] }], signal);
    await expect(failure).rejects.toMatchObject({ code: "KW_RPC_LOG_LIMIT" });
    await expect(failure).rejects.toThrow(/block 100 alone exceeds the node's log query limits/);
  });

  it("splits an answer over the client's size cap like a refusal", async () => {
    const sim = await startSimulator({ seed: 24, initialBlocks: 8 });
    const range = { from: sim.head() - 7, to: sim.head() };
    const all = await createLogReader(createTestCommon(), { rpc: client(sim.rpcUrl) }).read(range, [{}], signal);
    const small = await createLogReader(createTestCommon(), { rpc: client(sim.rpcUrl, { maxBytes: 16_000 }) }).read(range, [{}], signal);
    expect(small).toEqual(all);
  });

  it("cuts a filter longer than maxRequestBytes into queries that fit, by its longest list", async () => {
    const server = await fixture();
    server.setDefault(answer([]));
    const addresses = Array.from({ length: 7 }, (_, i) => `0x${String(i + 1).padStart(40, "0")}`);
    // 200 bytes of envelope and three addresses of 45.
    await createLogReader(createTestCommon(), { rpc: client(server.url), maxRequestBytes: 200 + 3 + 3 * 45 }).read({ from: 5, to: 6 }, [{ address: addresses }], signal);
    expect(asked(server.requests.map((r) => r.body))).toEqual(["5-6×3", "5-6×3", "5-6×1"]);
    for (const request of server.requests) expect(Buffer.byteLength(request.body)).toBeLessThanOrEqual(200 + 3 + 3 * 45);
  });

  it("keeps every part of a cut filter a complete query: the parts match what the filter matches", () => {
    const topic = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
    const addresses = Array.from({ length: 50 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
    const parties = Array.from({ length: 80 }, (_, i) => topic(1000 + i));
    const filter = { address: addresses, topics: [[topic(1)], null, parties] };
    const parts = logQueryBatches(filter, 2_000);
    for (const part of parts) expect(logQueryBytes(part)).toBeLessThanOrEqual(2_000);
    // Every (address, party) pair is asked exactly once.
    const pairs = parts.flatMap((p) => (p.address ?? []).flatMap((a) => ((p.topics?.[2] ?? []) as string[]).map((t) => `${a}:${t}`)));
    expect(pairs.length).toBe(50 * 80);
    expect(new Set(pairs).size).toBe(50 * 80);
    expect(parts.every((p) => p.topics?.[0]?.[0] === topic(1) && p.topics[1] === null)).toBe(true);
    // At the issue's largest scale: 100,000 addresses under Kaia's 512 KiB, 45 bytes each.
    const many = Array.from({ length: 100_000 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`);
    const cut = logQueryBatches({ address: many }, KAIA_MAX_REQUEST_BYTES);
    expect(cut).toHaveLength(Math.ceil(100_000 / Math.floor((KAIA_MAX_REQUEST_BYTES - 203) / 45)));
    expect(cut.every((p) => logQueryBytes(p) <= KAIA_MAX_REQUEST_BYTES)).toBe(true);
    expect(cut.reduce((n, p) => n + (p.address?.length ?? 0), 0)).toBe(100_000);
    // A query that fits, and one that cannot be cut, are sent as they are.
    expect(logQueryBatches(filter, 1_000_000)).toEqual([filter]);
    expect(logQueryBatches({ address: [addresses[0] as string] }, 200)).toEqual([{ address: [addresses[0]] }]);
  });

  it("halves a query refused with a 413 that names no limit, and passes on a 413 for a query of single entries", async () => {
    const server = await fixture();
    const addresses = Array.from({ length: 8 }, (_, i) => `0x${String(i + 1).padStart(40, "0")}`);
    server.enqueue({ status: 413, body: "Request Entity Too Large" });
    server.setDefault(answer([]));
    await createLogReader(createTestCommon(), { rpc: client(server.url) }).read({ from: 5, to: 6 }, [{ address: addresses }], signal);
    // Half the lists' bytes beside the envelope: three of 45 bytes and their brackets a query.
    expect(asked(server.requests.map((r) => r.body))).toEqual(["5-6×8", "5-6×3", "5-6×3", "5-6×2"]);

    server.setDefault({ status: 413, body: "Request Entity Too Large" });
    await expect(createLogReader(createTestCommon(), { rpc: client(server.url) }).read({ from: 5, to: 6 }, [{ address: [A] }], signal)).rejects.toMatchObject({ code: "KW_RPC_HTTP" });
  });

  it("learns a node's smaller body limit from its 413, as Kaia words it, and loses nothing", async () => {
    const sim = await startSimulator({ seed: 26, initialBlocks: 12, rpcMaxRequestBytes: 1_000 });
    const range = { from: sim.head() - 11, to: sim.head() };
    const contracts = [...sim.addresses.tokens, ...sim.addresses.nftCollections, ...sim.addresses.contracts];
    const padding = Array.from({ length: 40 }, (_, i) => `0x${(0xf000 + i).toString(16).padStart(40, "0")}`);
    const common = createTestCommon();
    const reader = createLogReader(common, { rpc: client(sim.rpcUrl) });
    const logs = await reader.read(range, [{ address: [...contracts, ...padding] }], signal);
    const expected = contracts.flatMap((c) => sim.truth.accountEventLogs(c, range)).map((l) => `${l.block_number}:${l.log_index}`).sort();
    expect(logs.map((l) => `${l.blockNumber}:${l.logIndex}`).sort()).toEqual(expected);
    expect(sim.stats().requests.rpc?.["413"]).toBe(1);
    // Learnt: the next read is cut up front, and the node refuses nothing more.
    await reader.read(range, [{ address: [...contracts, ...padding] }], signal);
    expect(sim.stats().requests.rpc?.["413"]).toBe(1);
    expect((await counts(common)).split).toBe(1);
  });
});

describe("createLogReader's checks", () => {
  async function readOne(log: Record<string, unknown>): Promise<NodeLog[]> {
    const server = await fixture();
    server.setDefault(answer([log]));
    return createLogReader(createTestCommon(), { rpc: client(server.url) }).read({ from: 100, to: 100 }, [{}], signal);
  }

  it("reads a log exactly: lowercase hex, numbers for quantities, unknown fields tolerated", async () => {
    const [log] = await readOne(rawLog({ address: A.toUpperCase().replace("0X", "0x"), logIndex: "0x1f", transactionIndex: "0x3", somethingNew: 1 }));
    expect(log).toEqual({ address: A, topics: [HASH(1)], data: "0x", blockNumber: 100, blockHash: HASH(3), transactionHash: HASH(2), transactionIndex: 3, logIndex: 31 });
  });

  it.each([
    ["an address that is not 20 bytes", { address: "0x12" }, /address is not a 20-byte address/],
    ["five topics", { topics: [HASH(1), HASH(2), HASH(3), HASH(4), HASH(5)] }, /topics are not up to 4/],
    ["a topic that is not 32 bytes", { topics: ["0x12"] }, /topics are not up to 4/],
    ["data of half a byte", { data: "0xabc" }, /data is not 0x-prefixed hex bytes/],
    ["a decimal block number", { blockNumber: 100 }, /blockNumber is not a hex quantity/],
    ["a log index with a leading zero", { logIndex: "0x01" }, /logIndex is not a hex quantity/],
    ["a block outside the range asked for", { blockNumber: "0x65" }, /block 101, outside the range asked for \(100–100\)/],
    ["removed that is not a boolean", { removed: "no" }, /removed is not a boolean/],
  ])("refuses %s as the node's error", async (_what, extra, message) => {
    const failure = readOne(rawLog(extra));
    await expect(failure).rejects.toMatchObject({ code: "KW_RPC_BAD_LOG" });
    await expect(failure).rejects.toThrow(message);
  });

  it("refuses a log of an address it did not ask for, and a reader without room for a query", async () => {
    const server = await fixture();
    server.setDefault(answer([rawLog({ address: `0x${"bb".repeat(20)}` })]));
    await expect(createLogReader(createTestCommon(), { rpc: client(server.url) }).read({ from: 100, to: 100 }, [{ address: [A] }], signal)).rejects.toThrow(/not one of the addresses asked for/);
    expect(() => createLogReader(createTestCommon(), { rpc: client(server.url), maxRequestBytes: 100 })).toThrow(/maxRequestBytes must be a whole number of at least 200/);
  });

  it("drops a log the node marks removed, and counts it", async () => {
    const server = await fixture();
    server.setDefault(answer([rawLog({ removed: true }), rawLog({ logIndex: "0x1" })]));
    const common = createTestCommon();
    const logs = await createLogReader(common, { rpc: client(server.url) }).read({ from: 100, to: 100 }, [{}], signal);
    expect(logs.map((l) => l.logIndex)).toEqual([1]);
    expect((await common.metrics.nodeLogsRemoved.get()).values[0]?.value).toBe(1);
  });

  it("passes on a JSON-RPC error that is not about size", async () => {
    const server = await fixture();
    server.setDefault(refusal("invalid argument 0: hex string without 0x prefix"));
    await expect(createLogReader(createTestCommon(), { rpc: client(server.url) }).read({ from: 1, to: 9 }, [{}], signal)).rejects.toMatchObject({ code: "KW_RPC_CALL" });
    expect(server.requests).toHaveLength(1);
  });
});
