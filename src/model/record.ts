import type { NodeTransaction } from "./node-transaction.js";
import type { EventLog, InternalTransactionListItem, NftTransfer } from "../explorer/types.js";

/**
 * The record families a source can produce. Operations 3 and 4 both yield NFT transfers;
 * operations 7 and 8 both yield internal transactions; operation 11 yields event logs; the
 * node (JSON-RPC, not the explorer) yields top-level transactions. Rules are written per family.
 */
export const RECORD_FAMILIES = ["event_logs", "nft_transfers", "internal_transactions", "transactions"] as const;
export type RecordFamily = (typeof RECORD_FAMILIES)[number];

interface RecordBase {
  block: number;
  transactionHash: string | undefined;
  /**
   * The stable identity of the record, the same on every scan of the same chain:
   * event_logs: `block:tx_hash:log_index`;
   * nft_transfers: `block:tx_hash:contract:token_id:from:to:token_count` (transfers have no log index;
   *   the second of two transfers identical in every field of one transaction adds `#2`, see occurrenceKey);
   * internal_transactions: `block:tx_hash-or-#tx_index:call_id`;
   * transactions: the transaction hash (one record per transaction). Addresses lowercased.
   */
  key: string;
  /** Ascending order within a block: (transaction index or log index, then call id …). */
  order: readonly number[];
}

export type WatchedRecord =
  | (RecordBase & { family: "event_logs"; data: EventLog })
  | (RecordBase & { family: "nft_transfers"; data: NftTransfer })
  | (RecordBase & { family: "internal_transactions"; data: InternalTransactionListItem })
  | (RecordBase & { family: "transactions"; data: NodeTransaction });
