import { describe, expect, it } from "vitest";
import { checkBlockReceipts, type NodeAnomaly } from "../../src/chain/node-transactions.js";
import { decodeArguments, methodSpec } from "../../src/chain/method-abi.js";
import { ConfigError, parseConfigText } from "../../src/config/index.js";

const HASH = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const BLOCK_HASH = `0x${"bb".repeat(32)}`;
const A = `0x${"aa".repeat(20)}`;
const B = `0x${"b1".repeat(20)}`;
const P = `0x${"fe".repeat(20)}`;

/** A receipt as kaia_getBlockReceipts gives it (transaction fields merged with the receipt's). */
function receipt(index: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    blockHash: BLOCK_HASH, blockNumber: "0x64", transactionHash: HASH(index + 1), transactionIndex: `0x${index.toString(16)}`,
    from: A, to: B, value: "0xde0b6b3a7640000", status: "0x1", gasUsed: "0x5208", effectiveGasPrice: "0x5d21dba00",
    typeInt: 0, type: "TxTypeLegacyTransaction", input: "0x", logs: [], contractAddress: null, ...extra,
  };
}

describe("checkBlockReceipts", () => {
  it("reads a block's transactions exactly, Kaia types and fee payers included", () => {
    const [plain, delegated, failed] = checkBlockReceipts(100, [
      receipt(0),
      receipt(1, { typeInt: 10, type: "TxTypeFeeDelegatedValueTransferWithRatio", feePayer: P, feeRatio: "0x1e", value: "0x1", input: undefined }),
      receipt(2, { status: "0x0", txError: "0x9", typeInt: 48, type: "TxTypeSmartContractExecution", input: "0x2e1a7d4d" + "0".repeat(63) + "1" }),
    ]);
    expect(plain).toMatchObject({ hash: HASH(1), block_number: 100, transaction_index: 0, from: A, to: B, value: "1", status: "Success", gas_used: "21000", gas_price: "25000000000", fee: "0.000525" });
    expect(delegated).toMatchObject({ fee_payer: P, fee_ratio: 30, value: "0.000000000000000001", type_int: 10 });
    expect(failed).toMatchObject({ status: "Fail", tx_error: "0x9", error: "evm: execution reverted", method_id: "0x2e1a7d4d" });
  });

  it("fails a block on what it cannot trust", () => {
    expect(() => checkBlockReceipts(100, null)).toThrow(/KW_NODE_TRANSACTIONS|does not have the block/);
    expect(() => checkBlockReceipts(100, [receipt(0, { blockNumber: "0x65" })])).toThrow(/says block 101/);
    expect(() => checkBlockReceipts(100, [receipt(0), receipt(2)])).toThrow(/index 2: the node's list is out of order or has a gap/);
    expect(() => checkBlockReceipts(100, [receipt(0, { value: 12 })])).toThrow(/value is 12, not a hex quantity/);
    expect(() => checkBlockReceipts(100, [receipt(0, { status: "0x2" })])).toThrow(/status 0x2/);
    expect(() => checkBlockReceipts(100, [receipt(0, { typeInt: 9, type: "TxTypeFeeDelegatedValueTransfer" })])).toThrow(/fee-delegated .* but has no feePayer/);
    expect(() => checkBlockReceipts(100, [receipt(0), receipt(1, { blockHash: `0x${"cc".repeat(32)}` })])).toThrow(/block hash/);
  });

  it("tolerates and counts the rest", () => {
    const seen: NodeAnomaly[] = [];
    const [tx] = checkBlockReceipts(100, [receipt(0, { typeInt: 0x7805, type: "TxTypeFuture", effectiveGasPrice: undefined, gasPrice: "0x1", somethingNew: { a: 1 } })], (kind) => seen.push(kind));
    expect(tx).toMatchObject({ type: "TxTypeFuture", type_int: 0x7805, gas_price: "1" });
    expect(seen.sort()).toEqual(["no_effective_gas_price", "unknown_type"]);
  });
});

describe("methods", () => {
  it("decodes a call by a signature with names, and refuses dirty input", () => {
    const spec = methodSpec("transfer(address to, uint256 amount)");
    expect(spec).toMatchObject({ selector: "0xa9059cbb", name: "transfer", signature: "transfer(address,uint256)", names: ["to", "amount"] });
    const input = spec.selector + A.slice(2).padStart(64, "0") + "2a".padStart(64, "0");
    expect(decodeArguments(spec, input)).toEqual([{ name: "to", type: "address", value: A }, { name: "amount", type: "uint256", value: "42" }]);
    expect(decodeArguments(spec, input.slice(0, 70))).toBeUndefined();
    expect(decodeArguments(spec, spec.selector + "ff".repeat(32) + "2a".padStart(64, "0"))).toBeUndefined();
  });

  it("names a bad signature with its key path and line", () => {
    const text = `
chain: { rpc_url: "http://127.0.0.1:1" }
watches:
  - name: hot
    account: "${A}"
    sources: [transactions]
    methods: ["withdraw(uint x"]
rules: []
sinks: {}
`;
    let error: unknown;
    try {
      parseConfigText(text, { fileName: "c.yaml", env: {} });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const formatted = (error as ConfigError).format();
    expect(formatted).toContain("watches[0].methods[0]");
    expect(formatted).toMatch(/c\.yaml:7/);
    expect(formatted).toContain("not a function signature");
  });
});
