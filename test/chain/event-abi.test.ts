import { describe, expect, it } from "vitest";
import { createEventDecoder } from "../../src/chain/event-abi.js";
import type { NodeLog } from "../../src/chain/get-logs.js";
import { eventLogOf, nftTransfersOf } from "../../src/chain/log-records.js";
import { eventTopic } from "../../src/chain/signatures.js";

const A = `0x${"a1".repeat(20)}`;
const B = `0x${"b2".repeat(20)}`;
const C = `0x${"c3".repeat(20)}`;
const word = (n: bigint | number) => BigInt(n).toString(16).padStart(64, "0");
const topic = (address: string) => `0x${"0".repeat(24)}${address.slice(2)}`;
const log = (topics: string[], data: string): NodeLog => ({ address: C, topics, data, blockNumber: 7, blockHash: `0x${"0d".repeat(32)}`, transactionHash: `0x${"0e".repeat(32)}`, transactionIndex: 2, logIndex: 5 });
const TRANSFER = eventTopic("Transfer(address,address,uint256)");
const BATCH = eventTopic("TransferBatch(address,address,address,uint256[],uint256[])");
const batchData = `0x${word(64)}${word(160)}${word(2)}${word(1)}${word(2)}${word(2)}${word(3)}${word(4)}`;

describe("createEventDecoder", () => {
  const decoder = createEventDecoder([]);

  it("decodes the standard events as the explorer names and formats them, told apart by their topic count", () => {
    expect(decoder.decode(log([TRANSFER, topic(A), topic(B)], `0x${word(10n ** 30n)}`))).toEqual({
      name: "Transfer",
      items: [{ name: "from", value: A }, { name: "to", value: B }, { name: "value", value: "1000000000000000000000000000000" }],
    });
    expect(decoder.decode(log([TRANSFER, topic(A), topic(B), `0x${word(42)}`], "0x"))?.items).toEqual([{ name: "from", value: A }, { name: "to", value: B }, { name: "tokenId", value: "42" }]);
    expect(decoder.decode(log([eventTopic("ApprovalForAll(address,address,bool)"), topic(A), topic(B)], `0x${word(1)}`))?.items.at(-1)).toEqual({ name: "approved", value: "true" });
    expect(decoder.decode(log([BATCH, topic(C), topic(A), topic(B)], batchData))).toEqual({
      name: "TransferBatch",
      items: [{ name: "operator", value: C }, { name: "from", value: A }, { name: "to", value: B }, { name: "tokenIds", value: "[1, 2]" }, { name: "values", value: "[3, 4]" }],
    });
  });

  it("decodes by a watch's signature: indexed and names as written, indexed values first as the explorer lists them", () => {
    const swap = createEventDecoder(["event Swap(int256 amountIn, address indexed sender, bytes32 ref, string memo)"]);
    const memo = Buffer.from("héllo").toString("hex");
    const data = `0x${word((1n << 256n) - 5n)}${"ab".repeat(32)}${word(96)}${word(6)}${memo.padEnd(64, "0")}`;
    expect(swap.decode(log([eventTopic("Swap(int256,address,bytes32,string)"), topic(A)], data))).toEqual({
      name: "Swap",
      items: [{ name: "sender", value: A }, { name: "amountIn", value: "-5" }, { name: "ref", value: `0x${"ab".repeat(32)}` }, { name: "memo", value: "héllo" }],
    });
  });

  it("takes a bare signature's leading parameters as indexed, as many as the log's topics, and names them by type", () => {
    const bare = createEventDecoder(["Moved(address,address,uint256)"]);
    const moved = eventTopic("Moved(address,address,uint256)");
    expect(bare.decode(log([moved, topic(A)], `0x${topic(B).slice(2)}${word(9)}`))?.items).toEqual([
      { name: "address", value: A },
      { name: "address", value: B },
      { name: "uint256", value: "9" },
    ]);
    expect(bare.decode(log([moved, topic(A), topic(B), `0x${word(9)}`], "0x"))?.items.map((i) => i.value)).toEqual([A, B, "9"]);
  });

  it("tries a signature many watches give once, and keeps one that reads the same event otherwise", () => {
    const many = createEventDecoder([...Array.from({ length: 1000 }, () => "Moved(address indexed a, address indexed b, uint256 v)"), "Moved(address indexed a,address indexed b,uint256 v)", "Moved(address x, address y, uint256 z)"]);
    const moved = eventTopic("Moved(address,address,uint256)");
    expect(many.decode(log([moved, topic(A), topic(B)], `0x${word(9)}`))?.items.map((i) => i.name)).toEqual(["a", "b", "v"]);
    // The first signature needs two indexed parameters; the bare one takes the log's one topic.
    expect(many.decode(log([moved, topic(A)], `0x${topic(B).slice(2)}${word(9)}`))?.items.map((i) => i.name)).toEqual(["x", "y", "z"]);
  });

  it("decodes nothing it cannot read exactly: another topic0, a topic count no signature fits, short or dirty data", () => {
    expect(decoder.decode(log([eventTopic("Other(uint256)")], `0x${word(1)}`))).toBeUndefined();
    expect(decoder.decode(log([TRANSFER, topic(A)], `0x${word(1)}`))).toBeUndefined();
    expect(decoder.decode(log([TRANSFER, topic(A), topic(B)], "0x12"))).toBeUndefined();
    expect(decoder.decode(log([TRANSFER, `0x${"ff".repeat(32)}`, topic(B)], `0x${word(1)}`))).toBeUndefined();
    expect(decoder.decode(log([], "0x"))).toBeUndefined();
  });
});

describe("eventLogOf and nftTransfersOf", () => {
  it("keeps a log no signature decodes as Unknown, with its raw topics and data and no items", () => {
    const raw = log([eventTopic("Other(uint256)"), topic(A)], `0x${word(1)}`);
    expect(eventLogOf(raw, createEventDecoder([]))).toEqual({ log_index: 5, contract_address: C, type: "Unknown", topics: raw.topics, data: raw.data, items: [], block_number: 7, transaction_hash: raw.transactionHash });
  });

  it("makes one NFT transfer of a KIP-17 Transfer and of a TransferSingle, one per id of a TransferBatch, none of a token Transfer", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const base = { contract: { contract_address: C }, block_id: 7, transaction_hash: `0x${"0e".repeat(32)}`, transaction_index: 2, datetime: at, from: A, to: B };
    expect(nftTransfersOf(log([TRANSFER, topic(A), topic(B), `0x${word(42)}`], "0x"), at)).toEqual([{ ...base, token_id: "42", token_count: "1" }]);
    expect(nftTransfersOf(log([eventTopic("TransferSingle(address,address,address,uint256,uint256)"), topic(C), topic(A), topic(B)], `0x${word(7)}${word(3)}`), at)).toEqual([{ ...base, token_id: "7", token_count: "3" }]);
    expect(nftTransfersOf(log([BATCH, topic(C), topic(A), topic(B)], batchData), at)).toEqual([
      { ...base, token_id: "1", token_count: "3" },
      { ...base, token_id: "2", token_count: "4" },
    ]);
    expect(nftTransfersOf(log([TRANSFER, topic(A), topic(B)], `0x${word(1)}`), at)).toEqual([]);
    expect(nftTransfersOf(log([BATCH, topic(C), topic(A), topic(B)], `0x${word(64)}${word(160)}${word(2)}${word(1)}`), at)).toEqual([]);
  });
});
