import { formatKei } from "../chain/units.js";
import type { InternalTransactionListItem } from "../explorer/types.js";
import { capRecord } from "./cap-record.js";
import { defineFamily, type RecordShape } from "./define-family.js";
import { amountKeiOf, integerOf, isFailStatus } from "./record-values.js";
import { BLOCK_FIELD, TRANSACTION_FIELD, caseBlindField, exactTextField, shortAddress, storedField, storedText, summaryText } from "./shared-fields.js";

const NO_ORDER: readonly number[] = Object.freeze([]);

/**
 * The call moved no value: it has an error of its own, or its transaction failed (which
 * reverts every frame of it). A frame that succeeded under a failed frame of a successful
 * transaction is not seen here: the record has no parent call to follow.
 */
const callFailed = (d: InternalTransactionListItem): boolean => (d.error !== undefined && d.error !== "") || isFailStatus(d.transaction_status?.status);

/**
 * Internal transactions: operation 7 (accountInternalTransactions) of an account, 8
 * (blockInternalTransactions) of every block, or the node's call traces of each block
 * (chain.traces; chain/block-traces.ts builds the same records under the same keys).
 */
export const internalTransactions = defineFamily<"internal_transactions", InternalTransactionListItem>({
  name: "internal_transactions",
  noun: ["internal transaction", "internal transactions"],
  readers: { explorer: ["accountInternalTransactions", "blockInternalTransactions"], node: ["nodeInternalTransactions"], account: "accountInternalTransactions", transaction: { block: "blockInternalTransactions" } },
  watchedBy: { account: "source", kinds: ["every_block"] },
  normalize(raw, bounded) {
    const data = bounded === true ? raw : capRecord(raw);
    const tx = data.transaction_hash === undefined ? `#${data.transaction_index}` : data.transaction_hash.toLowerCase();
    return { family: "internal_transactions", block: data.block_id, transactionHash: data.transaction_hash, key: `${data.block_id}:${tx}:${data.call_id}`, order: [data.transaction_index, data.call_id], data };
  },
  probe(raw, bounded) {
    const data = bounded === true ? raw : capRecord(raw);
    return { family: "internal_transactions", block: data.block_id, transactionHash: data.transaction_hash, key: "", order: NO_ORDER, data };
  },
  // The call id tells every call of a transaction apart: a repeat is page drift.
  twinsPossible: false,
  fields: {
    type: caseBlindField({ kind: "keyword", doc: "CALL, CREATE, CREATE2, DELEGATECALL, STATICCALL, CALLCODE, SELFDESTRUCT, …", example: "type: { in: [CREATE, CREATE2] }" }, (r) => r.data.type),
    from: caseBlindField({ kind: "address", doc: "caller", example: 'from: "0x…"' }, (r) => r.data.from),
    to: caseBlindField({ kind: "address", doc: "callee (absent for some creations)", example: "to: { exists: false }" }, (r) => r.data.to),
    amount: {
      kind: "amount",
      doc: "native value moved: none when the call failed or sits in a failed transaction (see attempted_amount)",
      example: 'amount: { gte: "1000 KAIA" }',
      read: (r) => (callFailed(r.data) ? undefined : r.data.amount),
      prepare: (r) => (callFailed(r.data) ? undefined : amountKeiOf(r.data.amount)),
    },
    attempted_amount: {
      kind: "amount",
      doc: "native value the call carried, whether or not it moved: for rules on failed calls",
      example: 'attempted_amount: { gte: "1000 KAIA" }',
      read: (r) => r.data.amount,
      prepare: (r) => amountKeiOf(r.data.amount),
    },
    status: caseBlindField({ kind: "keyword", values: ["success", "fail"], doc: "status of the enclosing transaction: Success or Fail", example: "status: Fail" }, (r) => r.data.transaction_status?.status),
    failed: {
      kind: "boolean",
      doc: "the call has an error or its transaction failed",
      example: "failed: true",
      read: (r) => callFailed(r.data),
      prepare: (r) => callFailed(r.data),
    },
    error: exactTextField({ kind: "text", doc: "the call's error text", example: 'error: { contains: "out of gas" }' }, (r) => r.data.error),
    fail_message: {
      ...exactTextField({ kind: "text", doc: "the failed transaction's message (from the node's traces: the revert reason, else the error)", example: 'fail_message: { matches: "/insufficient/i" }' }, (r) => r.data.transaction_status?.fail_message),
      fromNode: { value: "differs", why: "the explorer writes the receipt's error text (\"EVM: execution reverted - uint(9)\"), the node's trace the revert reason" },
    },
    method_id: caseBlindField({ kind: "hash", operand: "selector", doc: "the 4-byte function selector; write the function signature or 0x + 8 hex", example: 'method_id: "transfer(address,uint256)"' }, (r) => r.data.method_id),
    signature: {
      ...exactTextField({ kind: "text", doc: "the decoded function name as the explorer shows it (explorer only)", example: 'signature: { starts_with: "withdraw" }' }, (r) => r.data.signature),
      fromNode: { value: "absent", why: "the explorer names the selector from its own database; the node's trace has the selector only: write method_id with the function's signature" },
    },
    call_id: {
      kind: "integer",
      doc: "position of the call in its transaction's call tree",
      example: "call_id: 0",
      read: (r) => r.data.call_id,
      prepare: (r) => integerOf(r.data.call_id),
    },
    block: BLOCK_FIELD,
    transaction: TRANSACTION_FIELD,
  },
  datetime: (r) => r.data.datetime ?? null,
  links: (r) => ({ account: r.data.from }),
  summary(r) {
    const d = r.data;
    const kei = amountKeiOf(d.amount);
    const amount = kei === undefined ? summaryText(String(d.amount), 40) : formatKei(kei, { group: true });
    let line = `${amount} KAIA ${summaryText(d.type, 16)} ${shortAddress(d.from)} → ${d.to === undefined ? "(no recipient)" : shortAddress(d.to)}`;
    const message = d.transaction_status?.fail_message || d.error;
    if (d.transaction_status?.status === "Fail") line += ` (Fail: ${message ? summaryText(message, 80) : "no message"})`;
    else if (d.error) line += ` (error: ${summaryText(d.error, 80)})`;
    return line;
  },
  templateVariables: ["type", "from", "to", "amount_kaia", "amount_kei", "status", "failed", "error", "fail_message", "method_id", "signature", "call_id"],
  templateValue(name, r) {
    const d = r.data;
    switch (name) {
      case "amount_kaia": {
        const kei = amountKeiOf(d.amount);
        return kei === undefined ? d.amount : formatKei(kei);
      }
      case "amount_kei": return amountKeiOf(d.amount);
      case "status": return d.transaction_status?.status;
      case "fail_message": return d.transaction_status?.fail_message;
      case "failed": return Boolean(d.error) || d.transaction_status?.status === "Fail";
      case "type": case "from": case "to": case "error": case "method_id": case "signature": case "call_id": return d[name];
    }
    return undefined;
  },
  view(r, add) {
    add("From", storedField(r, "from"));
    add("To", storedField(r, "to"));
    const amount = storedText(storedField(r, "amount"));
    if (amount !== undefined) add("Amount", `${amount} KAIA`, 100);
    add("Type", storedField(r, "type"), 40);
    const status = storedField(r, "transaction_status");
    const fail = storedText(storedField(status, "fail_message"));
    add("Status", [storedText(storedField(status, "status")), fail].filter((x) => x !== undefined && x !== "").join(": "));
    add("Error", storedField(r, "error"));
    add("Method", storedText(storedField(r, "signature")) ?? storedText(storedField(r, "method_id")));
  },
  describe: (r, c) => {
    const d = r.data;
    return `call ${d.call_id} · ${c(d.type)} · ${c(d.from)} → ${c(d.to)} · ${c(d.amount)} KAIA${d.transaction_status ? ` · ${c(d.transaction_status.status)}` : ""}`;
  },
  recordShape: {
    call_id: "value",
    block_id: "value",
    transaction_hash: "value",
    transaction_index: "value",
    fee_payer: "value",
    datetime: "value",
    type: "value",
    from: "value",
    to: "value",
    amount: "value",
    error: "value",
    method_id: "value",
    signature: "value",
    transaction_status: { status: "value", fail_message: "value" },
  } satisfies Record<keyof InternalTransactionListItem, RecordShape>,
});
