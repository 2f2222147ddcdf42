import { KaiawatchError } from "../common/errors.js";
import type { NodeTransaction } from "../model/node-transaction.js";
import { formatKei } from "./units.js";

export type { NodeTransaction } from "../model/node-transaction.js";

/** A node's answer for a block's transactions is not what kaiawatch can read. */
export class NodeTransactionsError extends KaiawatchError {
  override name = "NodeTransactionsError";
  readonly block: number;
  constructor(block: number, message: string, options: { cause?: unknown } = {}) {
    super("KW_NODE_TRANSACTIONS", `block ${block}: ${message}`, options);
    this.block = block;
  }
}

/** Something read that kaiawatch tolerates but counts (kaiawatch_node_transaction_anomalies_total). */
export type NodeAnomaly = "unknown_type" | "type_name_mismatch" | "no_effective_gas_price" | "unknown_tx_error";

const HASH = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const BYTES = /^0x(?:[0-9a-fA-F]{2})*$/;

/**
 * Kaia's transaction types (blockchain/types/tx_internal_data.go): the value of `typeInt`.
 * A fee-delegated type is its basic type + 1, with a fee ratio + 2.
 */
export const KAIA_TX_TYPES: Readonly<Record<number, string>> = Object.freeze({
  0: "TxTypeLegacyTransaction",
  8: "TxTypeValueTransfer",
  9: "TxTypeFeeDelegatedValueTransfer",
  10: "TxTypeFeeDelegatedValueTransferWithRatio",
  16: "TxTypeValueTransferMemo",
  17: "TxTypeFeeDelegatedValueTransferMemo",
  18: "TxTypeFeeDelegatedValueTransferMemoWithRatio",
  24: "TxTypeAccountCreation",
  32: "TxTypeAccountUpdate",
  33: "TxTypeFeeDelegatedAccountUpdate",
  34: "TxTypeFeeDelegatedAccountUpdateWithRatio",
  40: "TxTypeSmartContractDeploy",
  41: "TxTypeFeeDelegatedSmartContractDeploy",
  42: "TxTypeFeeDelegatedSmartContractDeployWithRatio",
  48: "TxTypeSmartContractExecution",
  49: "TxTypeFeeDelegatedSmartContractExecution",
  50: "TxTypeFeeDelegatedSmartContractExecutionWithRatio",
  56: "TxTypeCancel",
  57: "TxTypeFeeDelegatedCancel",
  58: "TxTypeFeeDelegatedCancelWithRatio",
  64: "TxTypeBatch",
  72: "TxTypeChainDataAnchoring",
  73: "TxTypeFeeDelegatedChainDataAnchoring",
  74: "TxTypeFeeDelegatedChainDataAnchoringWithRatio",
  0x7801: "TxTypeEthereumAccessList",
  0x7802: "TxTypeEthereumDynamicFee",
  0x7803: "TxTypeEthereumBlob",
  0x7804: "TxTypeEthereumSetCode",
});

/** A Kaia type (not an Ethereum one) whose low bits say fee-delegated (IsFeeDelegatedTransaction). */
export function isFeeDelegatedType(typeInt: number): boolean {
  return (typeInt & 0xff00) !== 0x7800 && (typeInt & 0b11) !== 0;
}

/** The node's own error texts for the receipt codes (receiptstatus2errTxFailed in blockchain/state_transition.go, texts from blockchain/vm/errors.go and kerrors). */
const TX_ERRORS: Readonly<Record<number, string>> = Object.freeze({
  0x02: "VM error occurs while running smart contract",
  0x03: "max call depth exceeded",
  0x04: "contract address collision",
  0x05: "contract creation code storage out of gas",
  0x06: "evm: max code size exceeded",
  0x07: "out of gas",
  0x08: "evm: write protection",
  0x09: "evm: execution reverted",
  0x0a: "reached the opcode computation cost limit",
  0x0b: "account already exists",
  0x0c: "not a program account (e.g., an account having code and storage)",
  0x0d: "Human-readable address is not supported now",
  0x0e: "fee ratio is out of range [1, 99]",
  0x0f: "AccountKeyFail is not updatable",
  0x10: "different account key type",
  0x11: "AccountKeyNil cannot be initialized to an account",
  0x12: "public key is not on curve",
  0x13: "key weight is zero",
  0x14: "key is not serializable",
  0x15: "duplicated key",
  0x16: "weighted sum overflow",
  0x17: "unsatisfiable threshold. Weighted sum of keys is less than the threshold.",
  0x18: "length is zero",
  0x19: "length too long",
  0x1a: "nested composite type",
  0x1b: "a legacy transaction must be with a legacy account key",
  0x1c: "deprecated feature",
  0x1d: "not supported",
  0x1e: "smart contract code format is invalid",
});

/** txError 0x09: the only failure with a revert message to look for. */
export const TX_ERROR_REVERTED = 0x09;

type Raw = Record<string, unknown>;

/**
 * Checks one block's answer of `kaia_getBlockReceipts` strictly where kaiawatch reads it and
 * turns it into records: a list; each entry an object for this block (blockNumber, one
 * blockHash for all), at its position (transactionIndex 0, 1, 2, … in order), with a hash,
 * a sender, a recipient or none, hex quantities for value, gasUsed and the gas price, a
 * status of 0x1 or 0x0, a typeInt, and for a fee-delegated type a fee payer. Anything kaiawatch
 * does not read is ignored; what it reads but can do without (an unknown type, a type name
 * that disagrees with typeInt, a missing effectiveGasPrice) is tolerated and reported to
 * `onAnomaly`. A wrong answer fails the block: a record made of a guess would be an alert
 * made of a guess.
 */
export function checkBlockReceipts(block: number, result: unknown, onAnomaly: (kind: NodeAnomaly) => void = () => {}): NodeTransaction[] {
  const fail = (message: string): never => {
    throw new NodeTransactionsError(block, message);
  };
  if (result === null) fail("the node answered null (it does not have the block)");
  if (!Array.isArray(result)) fail(`kaia_getBlockReceipts answered ${typeof result}, not a list`);
  const list = result as unknown[];
  let blockHash: string | undefined;
  return list.map((entry, position): NodeTransaction => {
    const where = `transaction ${position}`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return fail(`${where} is not an object`);
    const raw = entry as Raw;
    const hex = (key: string, pattern: RegExp, optional = false): string | undefined => {
      const value = raw[key];
      if (value === undefined || value === null) return optional ? undefined : fail(`${where} has no ${key}`);
      if (typeof value !== "string" || !pattern.test(value)) return fail(`${where}: ${key} is ${JSON.stringify(value).slice(0, 80)}, not ${pattern === ADDRESS ? "an address" : pattern === HASH ? "a 32-byte hash" : pattern === BYTES ? "hex bytes" : "a hex quantity"}`);
      return value.toLowerCase();
    };
    const hash = hex("transactionHash", HASH) as string;
    const number = Number(BigInt(hex("blockNumber", QUANTITY) as string));
    if (number !== block) fail(`${where} (${hash}) says block ${number}`);
    const bh = hex("blockHash", HASH) as string;
    if (blockHash !== undefined && bh !== blockHash) fail(`${where} (${hash}) has block hash ${bh}, the others ${blockHash}`);
    blockHash = bh;
    const index = Number(BigInt(hex("transactionIndex", QUANTITY) as string));
    if (index !== position) fail(`${where} (${hash}) says index ${index}: the node's list is out of order or has a gap`);
    const from = hex("from", ADDRESS) as string;
    const to = hex("to", ADDRESS, true);
    // Kaia's account update, cancel and anchoring types have no value field: they move nothing.
    const valueKei = BigInt(hex("value", QUANTITY, true) ?? "0x0");
    const status = hex("status", QUANTITY) as string;
    if (status !== "0x1" && status !== "0x0") fail(`${where} (${hash}) has status ${status}, neither 0x1 nor 0x0`);
    const gasUsed = BigInt(hex("gasUsed", QUANTITY) as string);
    let price = hex("effectiveGasPrice", QUANTITY, true);
    if (price === undefined) {
      // Nodes before the EIP-1559 era of Kaia give gasPrice only, which was what was charged then.
      onAnomaly("no_effective_gas_price");
      price = hex("gasPrice", QUANTITY) as string;
    }
    const gasPrice = BigInt(price);
    const typeInt = raw.typeInt;
    if (typeof typeInt !== "number" || !Number.isSafeInteger(typeInt) || typeInt < 0) return fail(`${where} (${hash}) has typeInt ${JSON.stringify(typeInt)?.slice(0, 40)}, not a type number`);
    const known = KAIA_TX_TYPES[typeInt];
    if (known === undefined) onAnomaly("unknown_type");
    else if (raw.type !== undefined && raw.type !== known) onAnomaly("type_name_mismatch");
    const type = known ?? (typeof raw.type === "string" && /^\w{1,64}$/.test(raw.type) ? raw.type : `type ${typeInt}`);
    const feePayer = hex("feePayer", ADDRESS, true);
    if (isFeeDelegatedType(typeInt) && feePayer === undefined) fail(`${where} (${hash}) is fee-delegated (${type}) but has no feePayer`);
    const ratio = hex("feeRatio", QUANTITY, true);
    const input = hex("input", BYTES, true) ?? "0x";
    const record: NodeTransaction = {
      hash,
      block_number: number,
      block_hash: bh,
      transaction_index: index,
      from,
      value: formatKei(valueKei),
      value_kei: valueKei.toString(),
      type,
      type_int: typeInt,
      input_size: (input.length - 2) / 2,
      status: status === "0x1" ? "Success" : "Fail",
      gas_used: gasUsed.toString(),
      gas_price: gasPrice.toString(),
      fee: formatKei(gasUsed * gasPrice),
      log_count: Array.isArray(raw.logs) ? raw.logs.length : 0,
    };
    if (to !== undefined) record.to = to;
    if (feePayer !== undefined) record.fee_payer = feePayer;
    if (ratio !== undefined) record.fee_ratio = Number(BigInt(ratio));
    if (input.length >= 10) record.method_id = input.slice(0, 10);
    if (record.status === "Fail") {
      const code = hex("txError", QUANTITY, true);
      if (code !== undefined) {
        record.tx_error = code;
        const text = TX_ERRORS[Number(BigInt(code))];
        if (text === undefined) onAnomaly("unknown_tx_error");
        record.error = text ?? `error code ${code}`;
      }
    }
    const created = hex("contractAddress", ADDRESS, true);
    if (created !== undefined) record.contract_address = created;
    return record;
  });
}

/** The input of a transaction, kept beside its record only while it is decoded (never stored: it can be large). */
export function inputsOf(result: unknown): Map<string, string> {
  const inputs = new Map<string, string>();
  if (!Array.isArray(result)) return inputs;
  for (const entry of result as Raw[]) {
    const hash = entry?.transactionHash;
    const input = entry?.input;
    if (typeof hash === "string" && typeof input === "string" && BYTES.test(input) && input.length > 10) inputs.set(hash.toLowerCase(), input.toLowerCase());
  }
  return inputs;
}
