import type { ListResponse } from "../explorer/types.js";
import { API_LIMITS } from "../explorer/operations.js";
import type { WatchedRecord } from "../model/record.js";
import { prepareWindow } from "./normalize.js";
import { BlockTooDenseError } from "./errors.js";

/** Every page of one source's records in [from, to], in whatever order the API answers. */
export type Paginate = (range: { from: number; to: number }, signal: AbortSignal) => AsyncIterable<ListResponse<unknown>>;

export interface WindowChunk {
  from: number;
  to: number;
  /** The selected records: sorted ascending, deduplicated, all inside [from, to]. */
  records: WatchedRecord[];
  /** Records inside [from, to] the API returned, selected or not (a record repeated by page drift counts twice). */
  scanned: number;
  pages: number;
  duplicates: number;
  outside: number;
}

export interface FetchWindowOptions {
  paginate: Paginate;
  normalize: (data: never) => WatchedRecord;
  /**
   * The same record without its identity key (see PROBES), for `select` to read: a record
   * only `select` keeps is normalised whole. Default: every record normalised whole.
   */
  probe?: (data: never) => WatchedRecord;
  pageSize: number;
  /** Where the API stops counting (`total_count` is capped there); API_LIMITS.maxTotalCount by default. */
  countCap?: number;
  /** Pages one chunk may take before it is split instead (default: what the API can count). */
  maxPagesPerChunk?: number;
  /** Operation 8 answers per block: one chunk a block. */
  perBlock: boolean;
  /**
   * The records the caller wants (e.g. those some rule matches). The others are counted
   * and dropped as each page arrives, so that a window of 40,000 records does not sit in
   * memory until its last page when a few of them matter. Default: every record.
   */
  select?: (record: WatchedRecord) => boolean;
  signal: AbortSignal;
}

/**
 * The records of the window [from, to], as chunks in ascending block order. A chunk is
 * the unit of commit: its records are complete for its block range. A range holding more
 * records than the API can count (total_count is capped at 40,000) or than the page budget
 * allows is split in half, again and again, because paging deeper cannot reach the rest.
 */
export async function* fetchWindow(from: number, to: number, options: FetchWindowOptions): AsyncGenerator<WindowChunk> {
  if (options.perBlock) {
    for (let block = from; block <= to; block++) yield* fetchRange(block, block, options);
    return;
  }
  yield* fetchRange(from, to, options);
}

async function* fetchRange(from: number, to: number, options: FetchWindowOptions): AsyncGenerator<WindowChunk> {
  const countCap = options.countCap ?? API_LIMITS.maxTotalCount;
  const maxPages = options.maxPagesPerChunk ?? Math.ceil(countCap / options.pageSize);
  const kept: WatchedRecord[] = [];
  const probe = options.select === undefined ? undefined : options.probe;
  let pages = 0;
  let scanned = 0;
  let outside = 0;
  let tooMany = false;
  for await (const page of options.paginate({ from, to }, options.signal)) {
    if (pages === 0 && exceeds(page, countCap, options.pageSize, maxPages)) {
      tooMany = true;
      break;
    }
    pages += 1;
    for (const data of page.results) {
      // Selected on the record without its identity, which only a kept record needs.
      const record = (probe ?? options.normalize)(data as never);
      // Guarantee 2: never trust the API's bounds.
      if (record.block < from || record.block > to) {
        outside += 1;
        continue;
      }
      scanned += 1;
      if (options.select === undefined || options.select(record)) kept.push(probe === undefined ? record : options.normalize(data as never));
    }
  }
  if (tooMany) {
    if (from === to) throw new BlockTooDenseError(from, countCap);
    const middle = Math.floor((from + to) / 2);
    yield* fetchRange(from, middle, options);
    yield* fetchRange(middle + 1, to, options);
    return;
  }
  const prepared = prepareWindow(kept, from, to);
  yield { from, to, records: prepared.records, scanned, pages, duplicates: prepared.duplicates, outside };
}

function exceeds(page: ListResponse<unknown>, countCap: number, pageSize: number, maxPages: number): boolean {
  const { total_count } = page.paging;
  return total_count >= countCap || Math.ceil(total_count / pageSize) > maxPages;
}
