import type { OperationName } from "./operations.js";

/*
 * Fields the API document (explorer-api.md) lists, per record kind. Anything else in an
 * answer is accepted and kept, and counted here as drift: a field the server started to send
 * (or one of the predecessor's that KaiaScan kept) is visible in the metrics and in
 * `kaiawatch doctor` before a change that matters breaks a watch.
 */
export const ENVELOPE = new Set(["results", "paging", "property"]);
export const PAGING = new Set(["total_count", "current_page", "last", "total_page"]);
const NFT_TRANSFER = new Set(["contract", "block_id", "transaction_hash", "fee_payer", "transaction_index", "datetime", "from", "to", "token_id", "token_count"]);
const TRANSFER_CONTRACT = new Set(["contract_address", "contract_type"]);
const INTERNAL_TX = new Set(["call_id", "block_id", "transaction_hash", "transaction_index", "fee_payer", "datetime", "type", "from", "to", "amount", "error", "method_id", "signature", "transaction_status"]);
const TRANSACTION_STATUS = new Set(["status", "fail_message"]);
const CALL_OF_TX = new Set(["call_id", "parent_call_id", "level", "type", "from", "to", "amount", "gas_limit", "input_data", "output_data", "error", "reverted"]);
const EVENT_LOG = new Set(["log_index", "contract_address", "type", "topics", "data", "items", "block_number", "transaction_hash", "estimated_event_log"]);
const NFT_ITEM = new Set(["contract_type", "info", "token_id", "token_uri", "holder", "total_supply", "total_transfer", "burn_amount", "total_burn", "metadata", "is_burned"]);
const INVENTORY_DETAIL = new Set(["contract_type", "token_id", "holder", "token_uri", "token_count", "metadata"]);
const ACCOUNT_INVENTORY = new Set(["nft", "token_id", "token_uri", "token_count"]);

/** The documented fields of a record, and of the nested objects kaiawatch reads in it. */
export interface RecordFields {
  own: ReadonlySet<string>;
  nested?: Readonly<Record<string, ReadonlySet<string>>>;
}

export const DOCUMENTED_RECORDS: Readonly<Record<OperationName, RecordFields>> = {
  transactionInternalTransactions: { own: CALL_OF_TX },
  nftItem: { own: NFT_ITEM },
  accountNftTransfers: { own: NFT_TRANSFER, nested: { contract: TRANSFER_CONTRACT } },
  nftTransfers: { own: NFT_TRANSFER, nested: { contract: TRANSFER_CONTRACT } },
  transactionNftTransfers: { own: NFT_TRANSFER, nested: { contract: TRANSFER_CONTRACT } },
  nftInventoryDetails: { own: INVENTORY_DETAIL },
  accountInternalTransactions: { own: INTERNAL_TX, nested: { transaction_status: TRANSACTION_STATUS } },
  blockInternalTransactions: { own: INTERNAL_TX, nested: { transaction_status: TRANSACTION_STATUS } },
  accountNftInventories: { own: ACCOUNT_INVENTORY },
  transactionEventLogs: { own: EVENT_LOG },
  accountEventLogs: { own: EVENT_LOG },
};

/** Field names go into metric labels: a server's odd key must not make an unbounded or unreadable label. */
const LABEL = /^[A-Za-z0-9_]{1,64}$/;
const labelOf = (name: string) => (LABEL.test(name) ? name : "(unnamed)");

/**
 * Records of a page looked at for drift, spread over it. Walking every key of every record
 * cost about a third of JSON.parse on a page of 2,000; a field a release adds is on every
 * record or on a kind of record, and a spread sample finds it on the first such page or soon after.
 */
const SAMPLED_RECORDS = 16;

/**
 * The undocumented fields of a checked answer, by path ("results[].fee_delegated";
 * "property" never: its contents are the server's to choose), each found once per answer.
 */
export function unknownFields(operation: OperationName, body: unknown, list: boolean): Set<string> {
  const found = new Set<string>();
  const note = (path: string) => found.add(path);
  const spec = DOCUMENTED_RECORDS[operation];
  const visit = (record: Record<string, unknown>, prefix: string) => {
    for (const key in record) {
      if (!spec.own.has(key)) note(`${prefix}${labelOf(key)}`);
      else if (spec.nested !== undefined && Object.hasOwn(spec.nested, key)) {
        const inner = record[key];
        const known = spec.nested[key] as ReadonlySet<string>;
        if (typeof inner === "object" && inner !== null) for (const k in inner) if (!known.has(k)) note(`${prefix}${key}.${labelOf(k)}`);
      }
    }
  };
  const o = body as Record<string, unknown>;
  if (!list) {
    visit(o, "");
    return found;
  }
  for (const key in o) if (!ENVELOPE.has(key)) note(labelOf(key));
  for (const key in o.paging as Record<string, unknown>) if (!PAGING.has(key)) note(`paging.${labelOf(key)}`);
  const results = o.results as Record<string, unknown>[];
  const step = Math.max(1, results.length / SAMPLED_RECORDS);
  for (let i = 0; i < results.length; i += step) visit(results[Math.floor(i)] as Record<string, unknown>, "results[].");
  return found;
}
