/**
 * The explorer API's resources, as kaiawatch holds them after validation at the boundary
 * (see `../shared/explorer-api.md` and DESIGN.md §3). Field names are the API's own
 * (snake_case). Native amounts are kept as exact decimal strings in KAIA, never floats.
 * Enumerations are string unions that still accept values the spec does not list.
 */

/** A decimal number as text, exact: "1.5", "1000", "0.000000000000000001". */
export type DecimalString = string;
/** A 0x-prefixed 20-byte hex address, as the API wrote it. */
export type Address = string;
/** A 0x-prefixed 32-byte hex hash. */
export type Hash = string;
/** ISO-8601 UTC date-time with milliseconds. */
export type DateTimeString = string;

// `string & {}` keeps editor completion for the known values while accepting others.
type Open<T extends string> = T | (string & {});

export type ContractType = Open<"ERC20" | "KIP7" | "KIP17" | "KIP37" | "ERC721" | "ERC1155" | "CONSENSUS_NODE" | "CUSTOM" | "UNKNOWN" | "UNKNOWN_">;
export type AccountType = Open<"EOA" | "SCA" | "UNKNOWN">;
export type TransactionStatus = Open<"Success" | "Fail">;
export type InternalTransactionType = Open<"CALL" | "CREATE" | "CREATE2" | "DELEGATECALL" | "STATICCALL" | "CALLCODE" | "SELFDESTRUCT">;

export interface Paging {
  total_count: number;
  current_page: number;
  last: boolean;
  total_page: number;
}

/** Every list operation answers with this envelope. */
export interface ListResponse<T> {
  results: T[];
  paging: Paging;
  /**
   * Request context, of any shape: the document says "keys map to objects", the real server
   * sends the served block range as bare numbers (`blockNumberStart`, `blockNumberEnd`,
   * `blockInterval`) for a windowed request and nothing otherwise.
   */
  property?: unknown;
}

/** A record passed on whole, as received: nothing in kaiawatch reads its fields. */
export type OpaqueRecord = Record<string, unknown>;

export interface AccountSummary {
  address: Address;
  account_type?: AccountType;
  contract_type?: ContractType;
  symbol?: string;
  name?: string;
  icon?: string;
  verified?: boolean;
  kns_domain?: string;
  address_label?: string;
}

export interface NftMetadata {
  id: number;
  contract_address: Address;
  /** An integer that may exceed 2^53: kept as decimal text. */
  token_id: string;
  metadata?: string;
  image?: string;
  image_data?: string;
  external_url?: string;
  description?: string;
  name?: string;
  animation_url?: string;
  youtube_url?: string;
  background_color?: string;
  display_image?: string;
  last_updated: DateTimeString;
}

export interface NftInfo {
  symbol: string;
  name: string;
  icon?: string;
  contract_address: Address;
  decimal: number;
  verified: boolean;
  total_supply: DecimalString;
  implementation_address?: Address;
}

export interface NftItem {
  contract_type: ContractType;
  info: NftInfo;
  token_id: string;
  token_uri: string;
  holder?: AccountSummary;
  total_supply?: DecimalString;
  total_transfer?: number;
  burn_amount?: DecimalString;
  total_burn?: number;
  metadata?: NftMetadata;
  is_burned?: boolean;
}

export interface NftTransfer {
  contract: { contract_address: Address; contract_type?: ContractType };
  block_id: number;
  transaction_hash: Hash;
  fee_payer?: Address;
  transaction_index?: number;
  datetime: DateTimeString;
  from: Address;
  to?: Address;
  token_id: string;
  /** An integer count (KIP37 amounts can be large): decimal text. */
  token_count: DecimalString;
}

export interface NftInventoryDetail {
  contract_type: ContractType;
  token_id: string;
  holder: AccountSummary;
  token_uri: string;
  token_count?: DecimalString;
  metadata?: NftMetadata;
}

export interface AccountNftInventory {
  /** The collection's info (as NftItem carries it), with its type. */
  nft: NftInfo & { nft_type: ContractType };
  /** The spec leaves open whether these sit beside or inside `nft`; we accept both and hold them here. */
  token_id: string;
  token_uri: string;
  token_count?: DecimalString;
}

export interface DecodedParameter {
  type: string;
  name?: string;
  value: string;
}

/**
 * A call of operation 1. `from` and `to` are account summaries in the document and plain
 * addresses in the predecessor server's answer (InternalTransactionLeveledListView): both are
 * passed on as received. Only `call_id`, `level`, `error` and `reverted` are checked.
 */
export interface InternalTransactionOfTransaction {
  call_id: number;
  parent_call_id?: number;
  level: number;
  type: InternalTransactionType;
  from: AccountSummary | Address;
  to?: AccountSummary | Address;
  /** KAIA. */
  amount: DecimalString;
  gas_limit?: number;
  input_data?: {
    original_value: string;
    decoded_value?: { signature: string; method_id: string; parameters: DecodedParameter[] };
    utf8_value: string;
  };
  output_data?: string;
  error?: string;
  reverted?: { contract: Address; message?: string };
}

export interface InternalTransactionListItem {
  call_id: number;
  block_id: number;
  transaction_hash?: Hash;
  transaction_index: number;
  fee_payer?: Address;
  datetime?: DateTimeString;
  type: InternalTransactionType;
  from: Address;
  to?: Address;
  /** KAIA. */
  amount: DecimalString;
  error?: string;
  method_id?: string;
  signature?: string;
  transaction_status?: { status: TransactionStatus; fail_message?: string };
}

export interface EventLog {
  log_index: number;
  contract_address: Address;
  /** The decoded event name, or "Unknown". */
  type?: string;
  topics: string[];
  data: string;
  items: { name: string; value: string }[];
  block_number: number;
  transaction_hash?: Hash;
  estimated_event_log?: boolean;
}

/** The API's error body: `{"code","title","message"}`. */
export interface ApiErrorBody {
  code: string;
  title?: string;
  message?: string;
}
