import type { OperationName } from "./operations.js";
import { ShapeError, array, bool, decimal, field, int, object, objectOfObjects, present, str, string, tokenId } from "./shape.js";
import type {
  AccountNftInventory,
  AccountSummary,
  DecodedParameter,
  EventLog,
  InternalTransactionListItem,
  InternalTransactionOfTransaction,
  ListResponse,
  NftInfo,
  NftInventoryDetail,
  NftItem,
  NftMetadata,
  NftTransfer,
  Paging,
} from "./types.js";

/*
 * The documented shapes (explorer-api.md "Resources and their fields"), one checker per
 * resource, written out by hand: each reads its fields by name, which keeps the walk over a
 * 2,000-record page cheap (see shape.ts). Required fields first, then `present(...)` guards
 * the optional ones.
 */

function paging(value: unknown): Paging {
  const o = object(value);
  int(o.total_count, "total_count");
  int(o.current_page, "current_page");
  bool(o.last, "last");
  int(o.total_page, "total_page");
  return o as unknown as Paging;
}

function listOf<T>(item: (value: unknown) => T): (value: unknown) => ListResponse<T> {
  return (value) => {
    const o = object(value);
    array(o.results, "results", item);
    field("paging", o.paging, paging);
    if (present(o, "property", o.property)) field("property", o.property, objectOfObjects);
    return o as unknown as ListResponse<T>;
  };
}

function accountSummary(value: unknown): AccountSummary {
  const o = object(value);
  str(o.address, "address");
  if (present(o, "account_type", o.account_type)) str(o.account_type, "account_type");
  if (present(o, "contract_type", o.contract_type)) str(o.contract_type, "contract_type");
  if (present(o, "symbol", o.symbol)) str(o.symbol, "symbol");
  if (present(o, "name", o.name)) str(o.name, "name");
  if (present(o, "icon", o.icon)) str(o.icon, "icon");
  if (present(o, "verified", o.verified)) bool(o.verified, "verified");
  if (present(o, "kns_domain", o.kns_domain)) str(o.kns_domain, "kns_domain");
  if (present(o, "address_label", o.address_label)) str(o.address_label, "address_label");
  return o as unknown as AccountSummary;
}

function nftMetadata(value: unknown): NftMetadata {
  const o = object(value);
  int(o.id, "id");
  str(o.contract_address, "contract_address");
  o.token_id = tokenId(o.token_id, "token_id");
  str(o.last_updated, "last_updated");
  if (present(o, "metadata", o.metadata)) str(o.metadata, "metadata");
  if (present(o, "image", o.image)) str(o.image, "image");
  if (present(o, "image_data", o.image_data)) str(o.image_data, "image_data");
  if (present(o, "external_url", o.external_url)) str(o.external_url, "external_url");
  if (present(o, "description", o.description)) str(o.description, "description");
  if (present(o, "name", o.name)) str(o.name, "name");
  if (present(o, "animation_url", o.animation_url)) str(o.animation_url, "animation_url");
  if (present(o, "youtube_url", o.youtube_url)) str(o.youtube_url, "youtube_url");
  if (present(o, "background_color", o.background_color)) str(o.background_color, "background_color");
  if (present(o, "display_image", o.display_image)) str(o.display_image, "display_image");
  return o as unknown as NftMetadata;
}

/** NftInfo, and the `nft` object of an account inventory, which adds nft_type. */
function nftInfo(value: unknown): NftInfo {
  const o = object(value);
  str(o.symbol, "symbol");
  str(o.name, "name");
  str(o.contract_address, "contract_address");
  int(o.decimal, "decimal");
  bool(o.verified, "verified");
  o.total_supply = decimal(o.total_supply, "total_supply");
  if (present(o, "icon", o.icon)) str(o.icon, "icon");
  if (present(o, "implementation_address", o.implementation_address)) str(o.implementation_address, "implementation_address");
  return o as unknown as NftInfo;
}

function nftItem(value: unknown): NftItem {
  const o = object(value);
  str(o.contract_type, "contract_type");
  field("info", o.info, nftInfo);
  o.token_id = tokenId(o.token_id, "token_id");
  str(o.token_uri, "token_uri");
  if (present(o, "holder", o.holder)) field("holder", o.holder, accountSummary);
  if (present(o, "total_supply", o.total_supply)) o.total_supply = decimal(o.total_supply, "total_supply");
  if (present(o, "total_transfer", o.total_transfer)) int(o.total_transfer, "total_transfer");
  if (present(o, "burn_amount", o.burn_amount)) o.burn_amount = decimal(o.burn_amount, "burn_amount");
  if (present(o, "total_burn", o.total_burn)) int(o.total_burn, "total_burn");
  if (present(o, "metadata", o.metadata)) field("metadata", o.metadata, nftMetadata);
  if (present(o, "is_burned", o.is_burned)) bool(o.is_burned, "is_burned");
  return o as unknown as NftItem;
}

function transferContract(value: unknown): NftTransfer["contract"] {
  const o = object(value);
  str(o.contract_address, "contract_address");
  if (present(o, "contract_type", o.contract_type)) str(o.contract_type, "contract_type");
  return o as unknown as NftTransfer["contract"];
}

function nftTransfer(value: unknown): NftTransfer {
  const o = object(value);
  field("contract", o.contract, transferContract);
  int(o.block_id, "block_id");
  str(o.transaction_hash, "transaction_hash");
  str(o.datetime, "datetime");
  str(o.from, "from");
  o.token_id = tokenId(o.token_id, "token_id");
  o.token_count = decimal(o.token_count, "token_count");
  if (present(o, "fee_payer", o.fee_payer)) str(o.fee_payer, "fee_payer");
  if (present(o, "transaction_index", o.transaction_index)) int(o.transaction_index, "transaction_index");
  if (present(o, "to", o.to)) str(o.to, "to");
  return o as unknown as NftTransfer;
}

function nftInventoryDetail(value: unknown): NftInventoryDetail {
  const o = object(value);
  str(o.contract_type, "contract_type");
  o.token_id = tokenId(o.token_id, "token_id");
  field("holder", o.holder, accountSummary);
  str(o.token_uri, "token_uri");
  if (present(o, "token_count", o.token_count)) o.token_count = decimal(o.token_count, "token_count");
  if (present(o, "metadata", o.metadata)) field("metadata", o.metadata, nftMetadata);
  return o as unknown as NftInventoryDetail;
}

function inventoryNft(value: unknown): AccountNftInventory["nft"] {
  const o = object(value);
  nftInfo(o);
  str(o.nft_type, "nft_type");
  return o as unknown as AccountNftInventory["nft"];
}

/** The spec leaves open whether token_id/token_uri/token_count sit beside or inside `nft`: hold them beside it. */
function accountNftInventory(value: unknown): AccountNftInventory {
  const o = object(value);
  const nft = field("nft", o.nft, inventoryNft) as unknown as Record<string, unknown>;
  if (o.token_id == null && nft.token_id != null) o.token_id = nft.token_id;
  if (o.token_uri == null && nft.token_uri != null) o.token_uri = nft.token_uri;
  if (o.token_count == null && nft.token_count != null) o.token_count = nft.token_count;
  o.token_id = tokenId(o.token_id, "token_id");
  str(o.token_uri, "token_uri");
  if (present(o, "token_count", o.token_count)) o.token_count = decimal(o.token_count, "token_count");
  return o as unknown as AccountNftInventory;
}

function decodedParameter(value: unknown): DecodedParameter {
  const o = object(value);
  str(o.type, "type");
  str(o.value, "value");
  if (present(o, "name", o.name)) str(o.name, "name");
  return o as unknown as DecodedParameter;
}

function decodedValue(value: unknown): unknown {
  const o = object(value);
  str(o.signature, "signature");
  str(o.method_id, "method_id");
  array(o.parameters, "parameters", decodedParameter);
  return o;
}

function inputData(value: unknown): unknown {
  const o = object(value);
  str(o.original_value, "original_value");
  str(o.utf8_value, "utf8_value");
  if (present(o, "decoded_value", o.decoded_value)) field("decoded_value", o.decoded_value, decodedValue);
  return o;
}

function reverted(value: unknown): unknown {
  const o = object(value);
  str(o.contract, "contract");
  if (present(o, "message", o.message)) str(o.message, "message");
  return o;
}

function internalTransactionOfTransaction(value: unknown): InternalTransactionOfTransaction {
  const o = object(value);
  int(o.call_id, "call_id");
  int(o.level, "level");
  str(o.type, "type");
  field("from", o.from, accountSummary);
  o.amount = decimal(o.amount, "amount");
  if (present(o, "parent_call_id", o.parent_call_id)) int(o.parent_call_id, "parent_call_id");
  if (present(o, "to", o.to)) field("to", o.to, accountSummary);
  if (present(o, "gas_limit", o.gas_limit)) int(o.gas_limit, "gas_limit");
  if (present(o, "input_data", o.input_data)) field("input_data", o.input_data, inputData);
  if (present(o, "output_data", o.output_data)) str(o.output_data, "output_data");
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
  str(o.from, "from");
  o.amount = decimal(o.amount, "amount");
  if (present(o, "transaction_hash", o.transaction_hash)) str(o.transaction_hash, "transaction_hash");
  if (present(o, "fee_payer", o.fee_payer)) str(o.fee_payer, "fee_payer");
  if (present(o, "datetime", o.datetime)) str(o.datetime, "datetime");
  if (present(o, "to", o.to)) str(o.to, "to");
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
  str(o.contract_address, "contract_address");
  array(o.topics, "topics", string);
  str(o.data, "data");
  array(o.items, "items", eventItem);
  int(o.block_number, "block_number");
  if (present(o, "type", o.type)) str(o.type, "type");
  if (present(o, "transaction_hash", o.transaction_hash)) str(o.transaction_hash, "transaction_hash");
  if (present(o, "estimated_event_log", o.estimated_event_log)) bool(o.estimated_event_log, "estimated_event_log");
  return o as unknown as EventLog;
}

/** What each operation answers, after checking. */
export interface OperationResults {
  transactionInternalTransactions: ListResponse<InternalTransactionOfTransaction>;
  nftItem: NftItem;
  accountNftTransfers: ListResponse<NftTransfer>;
  nftTransfers: ListResponse<NftTransfer>;
  transactionNftTransfers: ListResponse<NftTransfer>;
  nftInventoryDetails: ListResponse<NftInventoryDetail>;
  accountInternalTransactions: ListResponse<InternalTransactionListItem>;
  blockInternalTransactions: ListResponse<InternalTransactionListItem>;
  accountNftInventories: ListResponse<AccountNftInventory>;
  transactionEventLogs: ListResponse<EventLog>;
  accountEventLogs: ListResponse<EventLog>;
}

const nftTransfers = listOf(nftTransfer);
const internalTransactions = listOf(internalTransactionListItem);
const eventLogs = listOf(eventLog);

/** Checks (in place) a parsed body of each operation; throws ShapeError naming the field. */
export const RESPONSE_CHECKERS: { [K in OperationName]: (value: unknown) => OperationResults[K] } = {
  transactionInternalTransactions: listOf(internalTransactionOfTransaction),
  nftItem,
  accountNftTransfers: nftTransfers,
  nftTransfers,
  transactionNftTransfers: nftTransfers,
  nftInventoryDetails: listOf(nftInventoryDetail),
  accountInternalTransactions: internalTransactions,
  blockInternalTransactions: internalTransactions,
  accountNftInventories: listOf(accountNftInventory),
  transactionEventLogs: eventLogs,
  accountEventLogs: eventLogs,
};

export { ShapeError };
