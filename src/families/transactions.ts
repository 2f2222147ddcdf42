import { formatKei } from "../chain/units.js";
import type { NodeTransaction } from "../model/node-transaction.js";
import { capRecord } from "./cap-record.js";
import { defineFamily, type RecordOf, type RecordShape } from "./define-family.js";
import { amountKeiOf, integerOf } from "./record-values.js";
import { BLOCK_FIELD, TRANSACTION_FIELD, caseBlindField, exactTextField, directionOf, directionOfLower, shortAddress, summaryText } from "./shared-fields.js";

/**
 * A top-level transaction read from the node: checked there (chain/node-transactions.ts), so
 * only bounded here. Its identity is its hash, already there: the probe is the record.
 */
function normalizeNodeTransaction(raw: NodeTransaction): RecordOf<"transactions"> {
  const data = capRecord(raw);
  return { family: "transactions", block: data.block_number, transactionHash: data.hash, key: data.hash, order: [data.transaction_index], data };
}

/** Top-level transactions with their receipts, from the node (kaia_getBlockReceipts), not the explorer. Addresses arrive lowercase. */
export const transactions = defineFamily<"transactions", NodeTransaction>({
  name: "transactions",
  // No noun: digests of these say "alerts", as they did before the families had definitions.
  readers: { explorer: [], node: ["blockTransactions"], account: undefined, transaction: undefined },
  watchedBy: { account: "source", kinds: [] },
  normalize: normalizeNodeTransaction,
  probe: normalizeNodeTransaction,
  // One record per transaction hash.
  twinsPossible: false,
  fields: {
    from: exactTextField({ kind: "address", doc: "the sender (the signer; not the fee payer)", example: 'from: "0x…"' }, (r) => r.data.from),
    to: exactTextField({ kind: "address", doc: "the recipient or called contract (absent for a contract creation)", example: 'to: { not_in: ["0x…"] }' }, (r) => r.data.to),
    // A failed transaction moved nothing: its value is no amount, so that no amount condition
    // (a big outflow, a small deposit) reads a reverted send as a transfer.
    amount: {
      kind: "amount",
      doc: "KAIA the transaction moved, exact: none when it failed (see attempted_amount)",
      example: 'amount: { gte: "1000 KAIA" }',
      read: (r) => (r.data.status === "Fail" ? undefined : r.data.value),
      prepare: (r) => (r.data.status === "Fail" ? undefined : BigInt(r.data.value_kei)),
    },
    attempted_amount: {
      kind: "amount",
      doc: "KAIA sent with the transaction, whether or not it moved: for rules on failed transactions",
      example: 'attempted_amount: { gte: "1000 KAIA" }',
      read: (r) => r.data.value,
      prepare: (r) => BigInt(r.data.value_kei),
    },
    direction: {
      kind: "keyword",
      values: ["in", "out", "self"],
      needsAccount: "it says whether the transaction came in or went out of that account",
      doc: "relative to the watched account: in (to it), out (from it), self (both); absent when the account only paid the fee",
      example: "direction: out",
      read: (r, _field, accounts) => directionOfLower(r.data.from, r.data.to, accounts),
    },
    status: {
      kind: "keyword",
      values: ["success", "fail"],
      doc: "the receipt's status: Success or Fail",
      example: "status: Fail",
      read: (r) => r.data.status,
      prepare: (r) => r.data.status.toLowerCase(),
      raw: (r) => r.data.status,
    },
    failed: { kind: "boolean", doc: "the transaction failed", example: "failed: true", read: (r) => r.data.status === "Fail", prepare: (r) => r.data.status === "Fail" },
    error: exactTextField({ kind: "text", doc: "the node's text for a failed transaction's error code (txError), e.g. \"evm: execution reverted\"", example: 'error: { contains: "out of gas" }' }, (r) => r.data.error),
    revert_reason: exactTextField({ kind: "text", doc: "the revert message, when the node's tracer gave one (debug_traceTransaction)", example: 'revert_reason: { contains: "insufficient" }' }, (r) => r.data.revert_reason),
    method_id: exactTextField({ kind: "hash", operand: "selector", doc: "the 4-byte function selector of the input; write the function signature or 0x + 8 hex", example: 'method_id: "withdraw(uint256)"' }, (r) => r.data.method_id),
    method: exactTextField({ kind: "text", doc: "the function name, for a selector the watch's `methods` name", example: "method: withdraw" }, (r) => r.data.method),
    "args.NAME": {
      kind: "arg",
      doc: "an argument decoded with the watch's `methods` (names from the signature, else arg0, arg1, …); integers compare as numbers",
      example: 'args.amount: { gt: "1000 KAIA" }',
      read: (r, field) => r.data.args?.find((a) => a.name === field.arg)?.value,
    },
    type: caseBlindField({ kind: "keyword", doc: "Kaia's transaction type: TxTypeValueTransfer, TxTypeFeeDelegatedSmartContractExecution, TxTypeEthereumDynamicFee, …", example: "type: TxTypeLegacyTransaction" }, (r) => r.data.type),
    type_int: {
      kind: "integer",
      doc: "the type's number (typeInt): 0 legacy, 8 value transfer, 9 its fee-delegated form, 48 contract execution, …",
      example: "type_int: { in: [9, 10] }",
      read: (r) => r.data.type_int,
      prepare: (r) => BigInt(r.data.type_int),
    },
    fee_payer: exactTextField({ kind: "address", doc: "the fee payer of a fee-delegated transaction", example: 'fee_payer: "0x…"' }, (r) => r.data.fee_payer),
    fee_delegated: {
      kind: "boolean",
      doc: "a fee payer paid (part of) the fee",
      example: "fee_delegated: true",
      read: (r) => r.data.fee_payer !== undefined,
      prepare: (r) => r.data.fee_payer !== undefined,
    },
    fee: {
      kind: "amount",
      doc: "gas used × effective gas price, in KAIA (paid by the fee payer when there is one)",
      example: 'fee: { gt: "1 KAIA" }',
      read: (r) => r.data.fee,
      prepare: (r) => amountKeiOf(r.data.fee),
    },
    gas_used: { kind: "integer", doc: "gas used", example: "gas_used: { gt: 1000000 }", read: (r) => r.data.gas_used, prepare: (r) => integerOf(r.data.gas_used) },
    index: {
      kind: "integer",
      doc: "position of the transaction in its block",
      example: "index: 0",
      read: (r) => r.data.transaction_index,
      prepare: (r) => BigInt(r.data.transaction_index),
    },
    block: BLOCK_FIELD,
    transaction: TRANSACTION_FIELD,
  },
  args: (r) => r.data.args,
  datetime: () => null,
  links: (r) => ({ account: r.data.from }),
  summary(r, watchedAccount) {
    const d = r.data;
    const dir = directionOf(d.from, d.to, watchedAccount);
    const call = d.method !== undefined ? ` ${summaryText(d.method, 40)}()` : d.method_id !== undefined ? ` call ${d.method_id}` : "";
    let line = `${formatKei(BigInt(d.value_kei), { group: true })} KAIA${dir ? ` ${dir}` : ""}${call} ${shortAddress(d.from)} → ${d.to === undefined ? "(contract creation)" : shortAddress(d.to)}`;
    if (d.fee_payer !== undefined) line += `, fee paid by ${shortAddress(d.fee_payer)}`;
    if (d.status === "Fail") {
      const why = d.revert_reason ?? d.error;
      line += ` (Fail: ${why ? summaryText(why, 80) : "no message"})`;
    }
    return line;
  },
  templateVariables: ["from", "to", "amount_kaia", "amount_kei", "direction", "status", "failed", "error", "revert_reason", "method_id", "method", "args.NAME", "type", "type_int", "fee_payer", "fee_delegated", "fee", "gas_used", "gas_price", "index"],
  templateValue(name, r, account) {
    const d = r.data;
    if (name.startsWith("args.")) return d.args?.find((a) => a.name === name.slice(5))?.value;
    switch (name) {
      case "amount_kaia": return d.value;
      case "amount_kei": return d.value_kei;
      case "direction": return directionOf(d.from, d.to, account);
      case "failed": return d.status === "Fail";
      case "fee_delegated": return d.fee_payer !== undefined;
      case "index": return d.transaction_index;
      case "from": case "to": case "status": case "error": case "revert_reason": case "method_id": case "method": case "type": case "type_int": case "fee_payer": case "fee": case "gas_used": case "gas_price":
        return d[name];
    }
    return undefined;
  },
  // The view shows only the block and the transaction (and the summary), as before.
  view: () => undefined,
  describe: (r, c) => {
    const d = r.data;
    return `tx ${d.transaction_index} · ${c(d.type)} · ${c(d.from)} → ${c(d.to)} · ${c(d.value)} KAIA · ${c(d.status)}`;
  },
  recordShape: {
    hash: "value",
    block_number: "value",
    block_hash: "value",
    transaction_index: "value",
    from: "value",
    to: "value",
    value: "value",
    value_kei: "value",
    type: "value",
    type_int: "value",
    fee_payer: "value",
    fee_ratio: "value",
    method_id: "value",
    method: "value",
    method_signature: "value",
    args: { list: { name: "value", type: "value", value: "value" } },
    input_size: "value",
    status: "value",
    tx_error: "value",
    error: "value",
    revert_reason: "value",
    gas_used: "value",
    gas_price: "value",
    fee: "value",
    contract_address: "value",
    log_count: "value",
  } satisfies Record<keyof NodeTransaction, RecordShape>,
});
