import type { NodeTransaction } from "../chain/node-transactions.js";
import type { EventLog, InternalTransactionListItem, NftTransfer } from "../explorer/types.js";
import type { RecordFamily, WatchedRecord } from "../model/record.js";
import { capRecord } from "./cap-record.js";

const lower = (value: string | undefined) => (value === undefined ? "" : value.toLowerCase());

/*
 * Every record enters the pipeline through one of the functions below (PROBES for what
 * rules test, NORMALIZERS for what is kept), so each bounds its record first (capRecord:
 * texts cut to MAX_RECORD_TEXT, nesting to MAX_RECORD_DEPTH). In place, so the second
 * call on the same record finds nothing left to cut. `bounded`: the record's page is known
 * to be within the limits (cap-record.ts: pageWithinRecordLimits), and the walk is skipped.
 */
const bound = <T>(raw: T, bounded: boolean | undefined): T => (bounded === true ? raw : capRecord(raw));

export function normalizeEventLog(raw: EventLog, bounded?: boolean): WatchedRecord {
  const data = bound(raw, bounded);
  const tx = lower(data.transaction_hash);
  return { family: "event_logs", block: data.block_number, transactionHash: data.transaction_hash, key: `${data.block_number}:${tx}:${data.log_index}`, order: [data.log_index], data };
}

export function normalizeNftTransfer(raw: NftTransfer, bounded?: boolean): WatchedRecord {
  const data = bound(raw, bounded);
  const tx = lower(data.transaction_hash);
  // Transfers carry no log index: the identity is everything that tells two transfers apart.
  const key = [data.block_id, tx, lower(data.contract.contract_address), data.token_id, lower(data.from), lower(data.to), data.token_count].join(":");
  return { family: "nft_transfers", block: data.block_id, transactionHash: data.transaction_hash, key, order: [data.transaction_index ?? 0], data };
}

export function normalizeInternalTransaction(raw: InternalTransactionListItem, bounded?: boolean): WatchedRecord {
  const data = bound(raw, bounded);
  const tx = data.transaction_hash === undefined ? `#${data.transaction_index}` : lower(data.transaction_hash);
  return { family: "internal_transactions", block: data.block_id, transactionHash: data.transaction_hash, key: `${data.block_id}:${tx}:${data.call_id}`, order: [data.transaction_index, data.call_id], data };
}

/**
 * A top-level transaction read from the node: checked there (node-transactions.ts), so
 * only bounded here. Its identity is its hash: one record per transaction.
 */
export function normalizeNodeTransaction(raw: NodeTransaction): WatchedRecord {
  const data = capRecord(raw);
  return { family: "transactions", block: data.block_number, transactionHash: data.hash, key: data.hash, order: [data.transaction_index], data };
}

export const NORMALIZERS = {
  event_logs: normalizeEventLog,
  nft_transfers: normalizeNftTransfer,
  internal_transactions: normalizeInternalTransaction,
  transactions: normalizeNodeTransaction,
} as const satisfies Record<RecordFamily, (data: never, bounded?: boolean) => WatchedRecord>;

const NO_ORDER: readonly number[] = Object.freeze([]);

/**
 * A record's readable part without its identity (`key` is "", `order` empty): what rules
 * test, built for every record of a page, where the identity key (several lowercased
 * parts joined) is needed only for the few records kept. Never stored or sent on.
 */
export const PROBES = {
  event_logs: (raw: EventLog, bounded?: boolean): WatchedRecord => {
    const data = bound(raw, bounded);
    return { family: "event_logs", block: data.block_number, transactionHash: data.transaction_hash, key: "", order: NO_ORDER, data };
  },
  nft_transfers: (raw: NftTransfer, bounded?: boolean): WatchedRecord => {
    const data = bound(raw, bounded);
    return { family: "nft_transfers", block: data.block_id, transactionHash: data.transaction_hash, key: "", order: NO_ORDER, data };
  },
  internal_transactions: (raw: InternalTransactionListItem, bounded?: boolean): WatchedRecord => {
    const data = bound(raw, bounded);
    return { family: "internal_transactions", block: data.block_id, transactionHash: data.transaction_hash, key: "", order: NO_ORDER, data };
  },
  // The key is the hash, already there: the probe is the record.
  transactions: normalizeNodeTransaction,
} as const satisfies Record<RecordFamily, (data: never, bounded?: boolean) => WatchedRecord>;

/** Ascending chain order: block, then the in-block position, then the identity key as a tie-break. */
export function compareRecords(a: WatchedRecord, b: WatchedRecord): number {
  if (a.block !== b.block) return a.block - b.block;
  const length = Math.max(a.order.length, b.order.length);
  for (let i = 0; i < length; i++) {
    const diff = (a.order[i] ?? 0) - (b.order[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export interface PreparedWindow {
  records: WatchedRecord[];
  /** Records the API returned twice (page drift while paging). */
  duplicates: number;
  /** Records outside the requested block range: the API ignored our bounds; they belong to another window. */
  outside: number;
}

/**
 * Families whose records can be identical in every field and still be distinct on chain:
 * two KIP-37 transfers of the same count of the same token between the same accounts in one
 * transaction (a batch transfer listing an id twice). The API gives transfers no log index,
 * so nothing in the record tells them apart. Event logs (log index) and internal
 * transactions (call id) cannot repeat, so a repeat of those is page drift.
 */
const TWINS_POSSIBLE: Record<RecordFamily, boolean> = { event_logs: false, nft_transfers: true, internal_transactions: false, transactions: false };

/**
 * The identity of the `occurrence`-th record (counted from 1) among records identical in
 * every field of one transaction. The first keeps the key as it always was, so that no
 * existing alert id changes; the second is `key#2`, the third `key#3`. An NFT transfer's
 * key ends with its token count, a decimal, so `#` after it cannot make another record's key.
 */
export function occurrenceKey(key: string, occurrence: number): string {
  return occurrence <= 1 ? key : `${key}#${occurrence}`;
}

/**
 * Never trust the API's order or its bounds (guarantee 2): keep what lies in [from, to],
 * sort ascending and settle repeated identities. A repeated event log or internal
 * transaction is dropped (page drift). Identical NFT transfers are numbered instead
 * (occurrenceKey): the caller must have checked that the API returned exactly as many records
 * as it counted (fetchWindow does), which rules out a page-drift repeat. The numbering is
 * stable because a block is never split across windows, so every twin of a transaction is
 * in the same call, and twins are identical, so which one is "second" does not matter.
 */
export function prepareWindow(records: WatchedRecord[], from: number, to: number): PreparedWindow {
  let outside = 0;
  const inside = records.filter((r) => {
    const ok = r.block >= from && r.block <= to;
    if (!ok) outside += 1;
    return ok;
  });
  inside.sort(compareRecords);
  const seen = new Map<string, number>();
  const unique: WatchedRecord[] = [];
  for (const record of inside) {
    const times = (seen.get(record.key) ?? 0) + 1;
    seen.set(record.key, times);
    if (times === 1) unique.push(record);
    else if (TWINS_POSSIBLE[record.family]) unique.push({ ...record, key: occurrenceKey(record.key, times) });
  }
  return { records: unique, duplicates: inside.length - unique.length, outside };
}

/**
 * The records of one transaction with twins numbered as prepareWindow numbers them (for
 * `kaiawatch explain`, whose records must carry the daemon's identities). Sorted input.
 */
export function numberTwins(records: WatchedRecord[]): WatchedRecord[] {
  const seen = new Map<string, number>();
  return records.map((record) => {
    if (!TWINS_POSSIBLE[record.family]) return record;
    const times = (seen.get(record.key) ?? 0) + 1;
    seen.set(record.key, times);
    return times === 1 ? record : { ...record, key: occurrenceKey(record.key, times) };
  });
}
