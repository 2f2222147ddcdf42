import type { OperationName } from "./operations.js";
import { ShapeError, arrayOf, bool, decimal, int, object, objectOfObjects, str, tokenId, type Checker } from "./shape.js";
import type {
  AccountNftInventory,
  AccountSummary,
  EventLog,
  InternalTransactionListItem,
  InternalTransactionOfTransaction,
  ListResponse,
  NftInventoryDetail,
  NftItem,
  NftMetadata,
  NftTransfer,
  Paging,
} from "./types.js";

/** The documented shapes (explorer-api.md "Resources and their fields"), one checker per resource. */

const paging = object<Paging>({ total_count: int, current_page: int, last: bool, total_page: int });

function list<T>(item: Checker<T>): Checker<ListResponse<T>> {
  return object<ListResponse<T>>({ results: arrayOf(item), paging }, { property: objectOfObjects });
}

const accountSummary = object<AccountSummary>(
  { address: str },
  { account_type: str, contract_type: str, symbol: str, name: str, icon: str, verified: bool, kns_domain: str, address_label: str },
);

const nftMetadata = object<NftMetadata>(
  { id: int, contract_address: str, token_id: tokenId, last_updated: str },
  { metadata: str, image: str, image_data: str, external_url: str, description: str, name: str, animation_url: str, youtube_url: str, background_color: str, display_image: str },
);

const nftInfoFields = { symbol: str, name: str, contract_address: str, decimal: int, verified: bool, total_supply: decimal };

const nftItem = object<NftItem>(
  { contract_type: str, info: object(nftInfoFields, { icon: str, implementation_address: str }), token_id: tokenId, token_uri: str },
  { holder: accountSummary, total_supply: decimal, total_transfer: int, burn_amount: decimal, total_burn: int, metadata: nftMetadata, is_burned: bool },
);

const nftTransfer = object<NftTransfer>(
  { contract: object({ contract_address: str }, { contract_type: str }), block_id: int, transaction_hash: str, datetime: str, from: str, token_id: tokenId, token_count: decimal },
  { fee_payer: str, transaction_index: int, to: str },
);

const nftInventoryDetail = object<NftInventoryDetail>(
  { contract_type: str, token_id: tokenId, holder: accountSummary, token_uri: str },
  { token_count: decimal, metadata: nftMetadata },
);

const accountNftInventoryFields = object<AccountNftInventory>(
  { nft: object({ ...nftInfoFields, nft_type: str }, { icon: str, implementation_address: str }), token_id: tokenId, token_uri: str },
  { token_count: decimal },
);

const HOISTED = ["token_id", "token_uri", "token_count"] as const;

/** The spec leaves open whether token_id/token_uri/token_count sit beside or inside `nft`; hold them beside it. */
const accountNftInventory: Checker<AccountNftInventory> = (value) => {
  if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>;
    const nft = o.nft;
    if (typeof nft === "object" && nft !== null) {
      const inner = nft as Record<string, unknown>;
      for (const key of HOISTED) if (o[key] == null && inner[key] != null) o[key] = inner[key];
    }
  }
  return accountNftInventoryFields(value);
};

const decodedParameter = object({ type: str, value: str }, { name: str });

const internalTransactionOfTransaction = object<InternalTransactionOfTransaction>(
  { call_id: int, level: int, type: str, from: accountSummary, amount: decimal },
  {
    parent_call_id: int,
    to: accountSummary,
    gas_limit: int,
    input_data: object(
      { original_value: str, utf8_value: str },
      { decoded_value: object({ signature: str, method_id: str, parameters: arrayOf(decodedParameter) }) },
    ),
    output_data: str,
    error: str,
    reverted: object({ contract: str }, { message: str }),
  },
);

const internalTransactionListItem = object<InternalTransactionListItem>(
  { call_id: int, block_id: int, transaction_index: int, type: str, from: str, amount: decimal },
  {
    transaction_hash: str,
    fee_payer: str,
    datetime: str,
    to: str,
    error: str,
    method_id: str,
    signature: str,
    transaction_status: object({ status: str }, { fail_message: str }),
  },
);

const eventLog = object<EventLog>(
  { log_index: int, contract_address: str, topics: arrayOf(str), data: str, items: arrayOf(object({ name: str, value: str })), block_number: int },
  { type: str, transaction_hash: str, estimated_event_log: bool },
);

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

export const RESPONSE_CHECKERS: { [K in OperationName]: Checker<OperationResults[K]> } = {
  transactionInternalTransactions: list(internalTransactionOfTransaction),
  nftItem,
  accountNftTransfers: list(nftTransfer),
  nftTransfers: list(nftTransfer),
  transactionNftTransfers: list(nftTransfer),
  nftInventoryDetails: list(nftInventoryDetail),
  accountInternalTransactions: list(internalTransactionListItem),
  blockInternalTransactions: list(internalTransactionListItem),
  accountNftInventories: list(accountNftInventory),
  transactionEventLogs: list(eventLog),
  accountEventLogs: list(eventLog),
};

export { ShapeError };
