/**
 * The spec's field tables (explorer-api.md, "Resources and their fields") as zod schemas:
 * required fields present, types right, enumerations in range, and no field the tables do
 * not list. Written from the spec, not from the simulator, so that a drift in either shows.
 */
import { z } from "zod";
import { OPERATIONS, type OperationName } from "../../src/explorer/operations.js";

const CONTRACT_TYPES = ["ERC20", "KIP7", "KIP17", "KIP37", "ERC721", "ERC1155", "CONSENSUS_NODE", "CUSTOM", "UNKNOWN", "UNKNOWN_"] as const;
const ACCOUNT_TYPES = ["EOA", "SCA", "UNKNOWN"] as const;
const INTERNAL_TYPES = ["CALL", "CREATE", "CREATE2", "DELEGATECALL", "STATICCALL", "CALLCODE", "SELFDESTRUCT"] as const;

const int32 = z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1);
const int64 = z.number().int();
const address = z.string().regex(/^0x[0-9a-f]{40}$/);
const hash = z.string().regex(/^0x[0-9a-f]{64}$/);
const hex = z.string().regex(/^0x[0-9a-f]*$/);
const dateTime = z.iso.datetime({ precision: 3 });
/** Native amounts: documented as numbers (the document dialect writes them bare), served by the real service as exact decimal strings. */
const amountText = z.string().regex(/^(0|[1-9][0-9]*)(\.[0-9]{1,18})?$/);
const amount = z.union([amountText, z.number().nonnegative()]);
const decimalInteger = z.string().regex(/^(0|[1-9][0-9]*)$/);
const contractType = z.enum(CONTRACT_TYPES);

export const accountSummary = z.strictObject({
  address,
  account_type: z.enum(ACCOUNT_TYPES).optional(),
  contract_type: contractType.optional(),
  symbol: z.string().optional(),
  name: z.string().optional(),
  icon: z.string().optional(),
  verified: z.boolean().optional(),
  kns_domain: z.string().optional(),
  address_label: z.string().optional(),
});

const nftMetadata = z.strictObject({
  id: int64,
  contract_address: address,
  token_id: z.number().int(),
  metadata: z.string().optional(),
  image: z.string().optional(),
  image_data: z.string().optional(),
  external_url: z.string().optional(),
  description: z.string().optional(),
  name: z.string().optional(),
  animation_url: z.string().optional(),
  youtube_url: z.string().optional(),
  background_color: z.string().optional(),
  display_image: z.string().optional(),
  last_updated: dateTime,
});

const nftInfoShape = {
  symbol: z.string(),
  name: z.string(),
  icon: z.string().optional(),
  contract_address: address,
  decimal: int32,
  verified: z.boolean(),
  total_supply: z.number(),
  implementation_address: address.optional(),
};

export const nftItem = z.strictObject({
  contract_type: contractType,
  info: z.strictObject(nftInfoShape),
  token_id: decimalInteger,
  token_uri: z.string(),
  holder: accountSummary.optional(),
  total_supply: z.number().int().optional(),
  total_transfer: int64.optional(),
  burn_amount: z.number().int().optional(),
  total_burn: int64.optional(),
  metadata: nftMetadata.optional(),
  is_burned: z.boolean().optional(),
});

export const nftTransfer = z.strictObject({
  contract: z.strictObject({ contract_address: address, contract_type: contractType.optional() }),
  block_id: int64,
  transaction_hash: hash,
  fee_payer: address.optional(),
  transaction_index: int32.optional(),
  datetime: dateTime,
  from: address,
  to: address.optional(),
  token_id: decimalInteger,
  token_count: z.number().int().min(0),
});

export const nftInventoryDetail = z.strictObject({
  contract_type: contractType,
  token_id: decimalInteger,
  holder: accountSummary,
  token_uri: z.string(),
  token_count: z.number().int().optional(),
  metadata: nftMetadata.optional(),
});

export const accountNftInventory = z.strictObject({
  nft: z.strictObject({ ...nftInfoShape, nft_type: contractType }),
  token_id: decimalInteger,
  token_uri: z.string(),
  token_count: z.number().int().optional(),
});

export const internalOfTransaction = z.strictObject({
  call_id: int32,
  parent_call_id: int32.optional(),
  level: int32,
  type: z.enum(INTERNAL_TYPES),
  from: accountSummary,
  to: accountSummary.optional(),
  amount,
  gas_limit: int64.optional(),
  input_data: z
    .strictObject({
      original_value: z.string(),
      decoded_value: z
        .strictObject({
          signature: z.string(),
          method_id: z.string(),
          parameters: z.array(z.strictObject({ type: z.string(), name: z.string().optional(), value: z.string() })),
        })
        .optional(),
      utf8_value: z.string(),
    })
    .optional(),
  output_data: z.string().optional(),
  error: z.string().optional(),
  reverted: z.strictObject({ contract: address, message: z.string().optional() }).optional(),
});

export const internalListItem = z.strictObject({
  call_id: int32,
  block_id: int64,
  transaction_hash: hash.optional(),
  transaction_index: int32,
  fee_payer: address.optional(),
  datetime: dateTime.optional(),
  type: z.enum(INTERNAL_TYPES),
  from: address,
  to: address.optional(),
  amount,
  error: z.string().optional(),
  method_id: z.string().regex(/^0x[0-9a-f]{8}$/).optional(),
  signature: z.string().optional(),
  transaction_status: z.strictObject({ status: z.enum(["Success", "Fail"]), fail_message: z.string().optional() }).optional(),
});

export const eventLog = z.strictObject({
  log_index: int32,
  contract_address: address,
  type: z.string().optional(),
  topics: z.array(hash).min(1),
  data: hex,
  items: z.array(z.strictObject({ name: z.string(), value: z.string() })),
  block_number: int64,
  transaction_hash: hash.optional(),
  estimated_event_log: z.boolean().optional(),
});

export const paging = z.strictObject({ total_count: int64.min(0), current_page: int32.min(1), last: z.boolean(), total_page: int32.min(0) });

const list = <T extends z.ZodType>(item: T) => z.strictObject({ results: z.array(item), paging, property: z.record(z.string(), z.record(z.string(), z.unknown())) });

/** The document's shapes (explorer-api.md): what the simulator's document dialect answers. */
export const RESPONSE_SCHEMAS: Record<OperationName, z.ZodType> = {
  transactionInternalTransactions: list(internalOfTransaction),
  nftItem,
  accountNftTransfers: list(nftTransfer),
  nftTransfers: list(nftTransfer),
  transactionNftTransfers: list(nftTransfer),
  nftInventoryDetails: list(nftInventoryDetail),
  accountInternalTransactions: list(internalListItem),
  blockInternalTransactions: list(internalListItem),
  accountNftInventories: list(accountNftInventory),
  transactionEventLogs: list(eventLog),
  accountEventLogs: list(eventLog),
};

/**
 * The real server's shapes where they differ from the document (klaytn/finder-api): the list
 * wrapper's `property` is the served block range of a windowed request and absent otherwise
 * (ScopePage, BlockRangeService), amounts are decimal strings (BigDecimalJsonSerializer),
 * operation 1's `from`/`to` are addresses (InternalTransactionLeveledListView), and operation
 * 9's `nft_type` stands beside `nft`.
 */
const served = z.strictObject({ blockNumberStart: int64, blockNumberEnd: int64, blockInterval: int64 });
const serverList = <T extends z.ZodType>(item: T, windowed: boolean) => z.strictObject({ results: z.array(item), paging, ...(windowed ? { property: served.optional() } : {}) });
const serverAmounts = <T extends z.ZodRawShape>(shape: T) => ("amount" in shape ? { ...shape, amount: amountText } : shape);

export const SERVER_RESPONSE_SCHEMAS: Record<OperationName, z.ZodType> = {
  transactionInternalTransactions: serverList(z.strictObject({ ...serverAmounts(internalOfTransaction.shape), from: address, to: address.optional() }), false),
  nftItem,
  accountNftTransfers: serverList(nftTransfer, true),
  nftTransfers: serverList(nftTransfer, true),
  transactionNftTransfers: serverList(nftTransfer, false),
  nftInventoryDetails: serverList(nftInventoryDetail, false),
  accountInternalTransactions: serverList(z.strictObject(serverAmounts(internalListItem.shape)), true),
  blockInternalTransactions: serverList(z.strictObject(serverAmounts(internalListItem.shape)), false),
  accountNftInventories: serverList(z.strictObject({ ...accountNftInventory.shape, nft: z.strictObject(nftInfoShape), nft_type: contractType }), false),
  transactionEventLogs: serverList(eventLog, false),
  accountEventLogs: serverList(eventLog, true),
};

export const errorBody = z.strictObject({ code: z.string().min(1), title: z.string(), message: z.string() });

/** The path of an operation with its parameters filled in. */
export function pathOf(op: OperationName, params: Record<string, string | number>): string {
  return OPERATIONS[op].path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing ${name} for ${op}`);
    return encodeURIComponent(String(value));
  });
}

/** Paths of fields whose value is null: the service omits nulls instead. */
export function nullPaths(value: unknown, path = "$"): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => nullPaths(v, `${path}[${i}]`));
  if (typeof value === "object") return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => nullPaths(v, `${path}.${k}`));
  return [];
}
