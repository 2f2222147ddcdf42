import type { RecordFamily, WatchedRecord } from "../model/record.js";
import type { RecordOf } from "../families/define-family.js";
import { familyDefinitions, familyOf } from "../families/registry.js";

/*
 * Every record enters the pipeline through its family's definition (src/families/): `probe`
 * for what rules test, `normalize` for what is kept. Each bounds its record first
 * (capRecord: texts cut to MAX_RECORD_TEXT, nesting to MAX_RECORD_DEPTH), in place, so the
 * second call on the same record finds nothing left to cut. `bounded`: the record's page is
 * known to be within the limits (cap-record.ts: pageWithinRecordLimits), and the walk is skipped.
 */
/** One function per family, taking that family's record as read. */
type PerFamily = { readonly [F in RecordFamily]: (raw: RecordOf<F>["data"], bounded?: boolean) => WatchedRecord };

/** Each family's normalizer (the record as kept: identity key and chain order). */
export const NORMALIZERS = Object.fromEntries(familyDefinitions().map((definition) => [definition.name, definition.normalize])) as unknown as PerFamily;

/**
 * A record's readable part without its identity (`key` is "", `order` empty): what rules
 * test, built for every record of a page, where the identity key (several lowercased
 * parts joined) is needed only for the few records kept. Never stored or sent on.
 */
export const PROBES = Object.fromEntries(familyDefinitions().map((definition) => [definition.name, definition.probe])) as unknown as PerFamily;

export const normalizeEventLog = NORMALIZERS.event_logs;
export const normalizeNftTransfer = NORMALIZERS.nft_transfers;
export const normalizeInternalTransaction = NORMALIZERS.internal_transactions;
export const normalizeNodeTransaction = NORMALIZERS.transactions;

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
 * Whether records of the family can be identical in every field and still be distinct on
 * chain (the definition's `twinsPossible`: NFT transfers, which carry no log index); a
 * repeat of any other family's record is page drift.
 */
const twinsPossible = (family: RecordFamily): boolean => familyOf(family).twinsPossible;

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
    else if (twinsPossible(record.family)) unique.push({ ...record, key: occurrenceKey(record.key, times) });
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
    if (!twinsPossible(record.family)) return record;
    const times = (seen.get(record.key) ?? 0) + 1;
    seen.set(record.key, times);
    return times === 1 ? record : { ...record, key: occurrenceKey(record.key, times) };
  });
}
