import type { OperationName } from "./operations.js";
import { ShapeError, address, array, bool, dateTime, decimal, field, hash, hexData, int, object, present, str, tokenId } from "./shape.js";
import type { EventLog, InternalTransactionListItem, InternalTransactionOfTransaction, ListResponse, NftTransfer, OpaqueRecord, Paging } from "./types.js";

/*
 * The boundary: what kaiawatch reads of each answer, checked exactly, and nothing else.
 * A field the daemon reads (a rule field, an identity or order field, the paging that
 * drives the scan, what the alert document and the enrichments take) must be there and of
 * its type; a field nobody reads is accepted as it comes, whatever its shape, since the
 * real server differs from the document where the document is loose (see
 * test/fixtures/explorer/ for each shape and where it comes from). Unknown fields are kept
 * and counted (drift.ts). Checkers read each field by name (see shape.ts); required fields
 * first, then `present(...)` guards the optional ones.
 */

function paging(value: unknown): Paging {
  const o = object(value);
  int(o.total_count, "total_count");
  int(o.current_page, "current_page");
  bool(o.last, "last");
  int(o.total_page, "total_page");
  return o as unknown as Paging;
}

/**
 * The list envelope. `property` carries request context (for a windowed request the served
 * block range as bare numbers, klaytn/finder-api BlockRangeService.getBlockRangeCondition):
 * any shape is accepted. The served range is read by the window fetch when it is there
 * (servedBlockEnd).
 */
function listOf<T>(item: (value: unknown) => T): (value: unknown) => ListResponse<T> {
  return (value) => {
    const o = object(value);
    array(o.results, "results", item);
    field("paging", o.paging, paging);
    if (o.property === null) delete o.property;
    return o as unknown as ListResponse<T>;
  };
}

/** The last block a windowed answer covers, when its `property` says (the real server clamps the range to what it has indexed). */
export function servedBlockEnd(response: ListResponse<unknown>): number | undefined {
  const property = response.property;
  if (typeof property !== "object" || property === null) return undefined;
  const end = (property as Record<string, unknown>).blockNumberEnd;
  return typeof end === "number" && Number.isSafeInteger(end) ? end : undefined;
}

/** A record whose contents nothing reads: passed on whole (enrichment's `nft` and inventory lookups). */
function opaque(value: unknown): OpaqueRecord {
  return object(value);
}

function transferContract(value: unknown): NftTransfer["contract"] {
  const o = object(value);
  address(o.contract_address, "contract_address");
  if (present(o, "contract_type", o.contract_type)) str(o.contract_type, "contract_type");
  return o as unknown as NftTransfer["contract"];
}

function nftTransfer(value: unknown): NftTransfer {
  const o = object(value);
  field("contract", o.contract, transferContract);
  int(o.block_id, "block_id");
  hash(o.transaction_hash, "transaction_hash");
  address(o.from, "from");
  o.token_id = tokenId(o.token_id, "token_id");
  o.token_count = decimal(o.token_count, "token_count");
  if (present(o, "datetime", o.datetime)) dateTime(o.datetime, "datetime");
  if (present(o, "fee_payer", o.fee_payer)) address(o.fee_payer, "fee_payer");
  if (present(o, "transaction_index", o.transaction_index)) int(o.transaction_index, "transaction_index");
  if (present(o, "to", o.to)) address(o.to, "to");
  return o as unknown as NftTransfer;
}

function reverted(value: unknown): unknown {
  const o = object(value);
  str(o.contract, "contract");
  if (present(o, "message", o.message)) str(o.message, "message");
  return o;
}

/**
 * A call of one transaction (operation 1), read by the `call_tree` enrichment: its depth,
 * error and revert. `from` and `to` are passed on as received: the document has them as
 * account summaries, the predecessor's server as plain addresses
 * (InternalTransactionLeveledListView), and nothing reads them.
 */
function internalTransactionOfTransaction(value: unknown): InternalTransactionOfTransaction {
  const o = object(value);
  int(o.call_id, "call_id");
  int(o.level, "level");
  if (present(o, "error", o.error)) str(o.error, "error");
  if (present(o, "reverted", o.reverted)) field("reverted", o.reverted, reverted);
  return o as unknown as InternalTransactionOfTransaction;
}

function transactionStatus(value: unknown): unknown {
  const o = object(value);
  str(o.status, "status");
  if (present(o, "fail_message", o.fail_message)) str(o.fail_message, "fail_message");
  return o;
}

function internalTransactionListItem(value: unknown): InternalTransactionListItem {
  const o = object(value);
  int(o.call_id, "call_id");
  int(o.block_id, "block_id");
  int(o.transaction_index, "transaction_index");
  str(o.type, "type");
  address(o.from, "from");
  o.amount = decimal(o.amount, "amount");
  if (present(o, "transaction_hash", o.transaction_hash)) hash(o.transaction_hash, "transaction_hash");
  if (present(o, "fee_payer", o.fee_payer)) address(o.fee_payer, "fee_payer");
  if (present(o, "datetime", o.datetime)) dateTime(o.datetime, "datetime");
  if (present(o, "to", o.to)) address(o.to, "to");
  if (present(o, "error", o.error)) str(o.error, "error");
  if (present(o, "method_id", o.method_id)) str(o.method_id, "method_id");
  if (present(o, "signature", o.signature)) str(o.signature, "signature");
  if (present(o, "transaction_status", o.transaction_status)) field("transaction_status", o.transaction_status, transactionStatus);
  return o as unknown as InternalTransactionListItem;
}

function eventItem(value: unknown): unknown {
  const o = object(value);
  str(o.name, "name");
  str(o.value, "value");
  return o;
}

function eventLog(value: unknown): EventLog {
  const o = object(value);
  int(o.log_index, "log_index");
  address(o.contract_address, "contract_address");
  array(o.topics, "topics", topic);
  hexData(o.data, "data");
  array(o.items, "items", eventItem);
  int(o.block_number, "block_number");
  if (present(o, "type", o.type)) str(o.type, "type");
  if (present(o, "transaction_hash", o.transaction_hash)) hash(o.transaction_hash, "transaction_hash");
  if (present(o, "estimated_event_log", o.estimated_event_log)) bool(o.estimated_event_log, "estimated_event_log");
  return o as unknown as EventLog;
}

function topic(value: unknown): string {
  return hash(value, "");
}

/** What each operation answers, after checking. */
export interface OperationResults {
  transactionInternalTransactions: ListResponse<InternalTransactionOfTransaction>;
  nftItem: OpaqueRecord;
  accountNftTransfers: ListResponse<NftTransfer>;
  nftTransfers: ListResponse<NftTransfer>;
  transactionNftTransfers: ListResponse<NftTransfer>;
  nftInventoryDetails: ListResponse<OpaqueRecord>;
  accountInternalTransactions: ListResponse<InternalTransactionListItem>;
  blockInternalTransactions: ListResponse<InternalTransactionListItem>;
  accountNftInventories: ListResponse<OpaqueRecord>;
  transactionEventLogs: ListResponse<EventLog>;
  accountEventLogs: ListResponse<EventLog>;
}

const nftTransfers = listOf(nftTransfer);
const internalTransactions = listOf(internalTransactionListItem);
const eventLogs = listOf(eventLog);
const opaqueList = listOf(opaque);

/** Checks (in place) a parsed body of each operation; throws ShapeError naming the field. */
export const RESPONSE_CHECKERS: { [K in OperationName]: (value: unknown) => OperationResults[K] } = {
  transactionInternalTransactions: listOf(internalTransactionOfTransaction),
  nftItem: opaque,
  accountNftTransfers: nftTransfers,
  nftTransfers,
  transactionNftTransfers: nftTransfers,
  nftInventoryDetails: opaqueList,
  accountInternalTransactions: internalTransactions,
  blockInternalTransactions: internalTransactions,
  accountNftInventories: opaqueList,
  transactionEventLogs: eventLogs,
  accountEventLogs: eventLogs,
};

export { ShapeError };
