import type { NodeTransaction } from "../chain/node-transactions.js";
import type { EventLog, InternalTransactionListItem, NftTransfer } from "../explorer/types.js";
import { BALANCE_ALERT_SOURCE, type RuleSource } from "../model/alert-document.js";

/** A field's shape: a value, an object of fields, or a list (read by index: `topics.1`, `items.0.value`). */
type Shape = "value" | { readonly [key: string]: Shape } | { readonly list: Shape };
const LIST = (of: Shape) => ({ list: of }) as const;

/*
 * The explorer record of each family, as `readRecordField` reads it (silences' --match,
 * group.by, cooldown_key). `satisfies Record<keyof …>` keeps each list equal to the
 * explorer's type: a field added to or removed from src/explorer/types.ts fails the build here.
 */
const NFT_TRANSFER = {
  contract: { contract_address: "value", contract_type: "value" },
  block_id: "value",
  transaction_hash: "value",
  fee_payer: "value",
  transaction_index: "value",
  datetime: "value",
  from: "value",
  to: "value",
  token_id: "value",
  token_count: "value",
} as const satisfies Record<keyof NftTransfer, Shape>;

const INTERNAL_TRANSACTION = {
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
} as const satisfies Record<keyof InternalTransactionListItem, Shape>;

const EVENT_LOG = {
  log_index: "value",
  contract_address: "value",
  type: "value",
  topics: LIST("value"),
  data: "value",
  items: LIST({ name: "value", value: "value" }),
  block_number: "value",
  transaction_hash: "value",
  estimated_event_log: "value",
} as const satisfies Record<keyof EventLog, Shape>;

const NODE_TRANSACTION = {
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
  args: LIST({ name: "value", type: "value", value: "value" }),
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
} as const satisfies Record<keyof NodeTransaction, Shape>;

/** The record of a balance alert (built by the balance monitor, not read from the explorer). */
const BALANCE_READING = { address: "value", asset: "value", symbol: "value", decimals: "value", balance: "value", balance_base_units: "value", condition: "value" } as const;

const RECORDS: Record<RuleSource, { readonly [key: string]: Shape }> = {
  nft_transfers: NFT_TRANSFER,
  internal_transactions: INTERNAL_TRANSACTION,
  event_logs: EVENT_LOG,
  transactions: NODE_TRANSACTION,
  [BALANCE_ALERT_SOURCE]: BALANCE_READING,
};

/**
 * The names rules use (src/rules/fields.ts) for fields the record keeps under another name:
 * `silence --match`, `group.by` and `cooldown_key` accept them too, so that one vocabulary
 * works everywhere (`status=Fail` as in a rule's `when`, or `transaction_status.status=Fail`
 * as in the record). Each reads the first of its record paths that the record has.
 */
export const RULE_FIELD_ALIASES: Readonly<Record<string, readonly string[]>> = {
  status: ["transaction_status.status"],
  fail_message: ["transaction_status.fail_message"],
  transaction: ["transaction_hash"],
  block: ["block_id", "block_number"],
  estimated: ["estimated_event_log"],
};

/** Rule fields computed from the record, not in it: a silence or a grouping key cannot read them. */
export const COMPUTED_RULE_FIELDS: Readonly<Record<string, string>> = {
  direction: "from or to",
  mint: "from (the zero address)",
  burn: "to",
  failed: "error, or status",
};

/**
 * True when `path` names a field that records of this family have (see readRecordField:
 * a dot path, list items by index, and `NAME` for `NAME_address`). A silence on a field that
 * does not exist would match nothing, or, matching "", everything without the field.
 */
export function recordFieldExists(family: RuleSource, path: string): boolean {
  const record = RECORDS[family];
  if (RULE_FIELD_ALIASES[path]?.some((target) => exists(record, target.split("."))) === true) return true;
  const keys = path.split(".");
  if (keys.length === 1 && !Object.hasOwn(record, path) && Object.hasOwn(record, `${path}_address`)) return true;
  return exists(record, keys);
}

/** The top-level fields of the family's records, for an error message. */
export function recordFieldNames(family: RuleSource): string[] {
  return Object.keys(RECORDS[family]);
}

function exists(shape: Shape, keys: readonly string[]): boolean {
  // An object read whole is its contract_address or address (readRecordField), so a path may end at one.
  if (keys.length === 0) return true;
  if (shape === "value") return false;
  const [key, ...rest] = keys as [string, ...string[]];
  if (isList(shape)) return /^\d+$/.test(key) && exists(shape.list, rest);
  const fields = shape as { readonly [key: string]: Shape };
  return Object.hasOwn(fields, key) && exists(fields[key]!, rest);
}

/** A list shape ({list}) rather than an object with fields: no record has a field named "list". */
function isList(shape: Exclude<Shape, "value">): shape is { readonly list: Shape } {
  return Object.keys(shape).length === 1 && Object.hasOwn(shape, "list");
}
