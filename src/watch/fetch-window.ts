import type { ListResponse } from "../explorer/types.js";
import { API_LIMITS } from "../explorer/operations.js";
import { servedBlockEnd } from "../explorer/response-checkers.js";
import { linkSignals } from "../common/signals.js";
import { sleep } from "../common/sleep.js";
import type { WatchedRecord } from "../model/record.js";
import { pageWithinRecordLimits } from "../families/cap-record.js";
import { prepareWindow } from "./normalize.js";
import { BlockTooDenseError, WindowCountMismatchError } from "./errors.js";

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
  normalize: (data: never, bounded?: boolean) => WatchedRecord;
  /**
   * The same record without its identity key (see PROBES), for `select` to read: a record
   * only `select` keeps is normalised whole. Default: every record normalised whole.
   */
  probe?: (data: never, bounded?: boolean) => WatchedRecord;
  pageSize: number;
  /** Where the API stops counting (`total_count` is capped there); API_LIMITS.maxTotalCount by default. */
  countCap?: number;
  /** Pages one chunk may take before it is split instead (default: what the API can count). */
  maxPagesPerChunk?: number;
  /** Operation 8 answers per block: one chunk a block. */
  perBlock: boolean;
  /** Operation 8: blocks asked for at once (default 1); see blocksInFlightFor. */
  blocksInFlight?: number;
  /**
   * The records the caller wants (e.g. those some rule matches). The others are counted
   * and dropped as each page arrives, so that a window of 40,000 records does not sit in
   * memory until its last page when a few of them matter. Default: every record.
   */
  select?: (record: WatchedRecord) => boolean;
  /** How often, and after what waits, a range whose records disagree with `total_count` is fetched again. */
  recount?: Partial<RecountPolicy>;
  /** Told of each disagreement before the range is fetched again (the poller logs it). */
  onRecount?: (mismatch: CountMismatch) => void;
  signal: AbortSignal;
}

export interface RecountPolicy {
  /** Fetches of a range after the first one (default 3). */
  retries: number;
  /** The wait before the first fetch again; doubles each time (default 1,000 ms). */
  baseMs: number;
  /** The longest wait (default 8,000 ms). */
  maxMs: number;
}

export const DEFAULT_RECOUNT: RecountPolicy = { retries: 3, baseMs: 1000, maxMs: 8000 };

export interface CountMismatch {
  from: number;
  to: number;
  /** `total_count` of each page, in order: they differ when the explorer's data changed while paging. */
  reported: number[];
  /** The records the pages held, all of them (outside the range or repeated included: the API counted what it sent). */
  received: number;
  /** 1 for the first fetch of the range. */
  attempt: number;
  /**
   * The last block the answers covered, when below `to`: the real server clamps a range to
   * what it has indexed and says so in `property.blockNumberEnd` (klaytn/finder-api
   * BlockRangeService), with a count that agrees with the records of the clamped range.
   */
  servedTo?: number;
}

/**
 * The records of the window [from, to], as chunks in ascending block order. A chunk is
 * the unit of commit: its records are complete for its block range. A range holding more
 * records than the API can count (total_count is capped at 40,000) or than the page budget
 * allows is split in half, again and again, because paging deeper cannot reach the rest.
 */
export async function* fetchWindow(from: number, to: number, options: FetchWindowOptions): AsyncGenerator<WindowChunk> {
  if (options.perBlock) {
    yield* fetchBlocks(from, to, options);
    return;
  }
  yield* fetchRange(from, to, options);
}

/** The most blocks of operation 8 asked for at once, whatever the rate: each holds its records until the blocks before it are in. */
export const MAX_BLOCKS_IN_FLIGHT = 64;

/**
 * Blocks of operation 8 asked for at once at this rate limit: a second's worth of requests.
 * Requests in flight are the rate times the answer time, so this keeps the limit busy with
 * answers up to a second slow; the limiter still spaces the requests.
 */
export function blocksInFlightFor(requestsPerSecond: number): number {
  return Math.max(1, Math.min(MAX_BLOCKS_IN_FLIGHT, Math.ceil(requestsPerSecond)));
}

/**
 * Operation 8 asks once per block. Asked one after another, a catch-up ran at one block per
 * answer time (9.6 blocks a second with answers 0-200 ms away and 50 requests a second
 * allowed). Here up to `blocksInFlight` blocks are asked for at once, and their chunks come
 * out in block order, each once it and every block before it are in: the cursor still moves
 * block after block. A block that fails ends the window after the blocks before it, and the
 * requests of the blocks after it are cancelled, as they are when the caller stops reading.
 */
async function* fetchBlocks(from: number, to: number, options: FetchWindowOptions): AsyncGenerator<WindowChunk> {
  const limit = Math.max(1, options.blocksInFlight ?? 1);
  // Linked (not AbortSignal.any) so that the explorer client sees that it follows the tick's signal.
  const controller = new AbortController();
  const link = linkSignals(options.signal, controller.signal);
  const blockOptions = { ...options, signal: link.signal };
  const pending: Promise<WindowChunk>[] = [];
  let next = from;
  const refill = () => {
    while (pending.length < limit && next <= to) {
      const chunk = readBlock(next++, blockOptions);
      // Awaited in order below; one that fails after an earlier failure must not go unhandled.
      chunk.catch(() => undefined);
      pending.push(chunk);
    }
  };
  try {
    refill();
    for (let chunk = pending.shift(); chunk !== undefined; chunk = pending.shift()) {
      const done = await chunk;
      // Asked for before the caller commits this one: the requests go on while it writes.
      refill();
      yield done;
    }
  } finally {
    controller.abort(new Error("the window ended before these blocks were read"));
    link.dispose();
  }
}

/** One block of operation 8: never split (a block too dense to count fails), so exactly one chunk. */
async function readBlock(block: number, options: FetchWindowOptions): Promise<WindowChunk> {
  const chunks: WindowChunk[] = [];
  for await (const chunk of fetchRange(block, block, options)) chunks.push(chunk);
  return chunks[0] as WindowChunk;
}

async function* fetchRange(from: number, to: number, options: FetchWindowOptions): AsyncGenerator<WindowChunk> {
  const policy = { ...DEFAULT_RECOUNT, ...options.recount };
  for (let attempt = 1; ; attempt++) {
    const pass = await readRange(from, to, options);
    if (pass === "too-many") {
      if (from === to) throw new BlockTooDenseError(from, options.countCap ?? API_LIMITS.maxTotalCount);
      const middle = Math.floor((from + to) / 2);
      yield* fetchRange(from, middle, options);
      yield* fetchRange(middle + 1, to, options);
      return;
    }
    const mismatch = countMismatch(pass, from, to, attempt);
    if (mismatch === undefined) {
      const prepared = prepareWindow(pass.kept, from, to);
      yield { from, to, records: prepared.records, scanned: pass.scanned, pages: pass.pages, duplicates: prepared.duplicates, outside: pass.outside };
      return;
    }
    // The explorer counted records it did not send (a block it is still indexing), or its
    // data changed between pages. Trusting the pages would lose records, or, worse, make a
    // page-drift repeat look like a second identical NFT transfer. Ask again, then give up
    // loudly: the tick fails and the cursor stays before `from`.
    if (attempt > policy.retries) throw new WindowCountMismatchError(mismatch);
    options.onRecount?.(mismatch);
    await sleep(Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1)), options.signal);
  }
}

interface RangePass {
  kept: WatchedRecord[];
  scanned: number;
  outside: number;
  pages: number;
  received: number;
  reported: number[];
  /** The lowest `property.blockNumberEnd` of the pages, when they said. */
  servedTo: number | undefined;
}

/** One paging of [from, to]: the kept records and what the pages said about their count. */
async function readRange(from: number, to: number, options: FetchWindowOptions): Promise<RangePass | "too-many"> {
  const countCap = options.countCap ?? API_LIMITS.maxTotalCount;
  const maxPages = options.maxPagesPerChunk ?? Math.ceil(countCap / options.pageSize);
  const probe = options.select === undefined ? undefined : options.probe;
  const pass: RangePass = { kept: [], scanned: 0, outside: 0, pages: 0, received: 0, reported: [], servedTo: undefined };
  for await (const page of options.paginate({ from, to }, options.signal)) {
    // A count at the cap is where the API stopped counting, not the count: split instead.
    if (pass.pages === 0 && exceeds(page, countCap, options.pageSize, maxPages)) return "too-many";
    pass.pages += 1;
    pass.received += page.results.length;
    pass.reported.push(page.paging.total_count);
    const served = servedBlockEnd(page);
    if (served !== undefined) pass.servedTo = Math.min(served, pass.servedTo ?? served);
    const bounded = pageWithinRecordLimits(page.results);
    for (const data of page.results) {
      // Selected on the record without its identity, which only a kept record needs.
      const record = (probe ?? options.normalize)(data as never, bounded);
      // Guarantee 2: never trust the API's bounds.
      if (record.block < from || record.block > to) {
        pass.outside += 1;
        continue;
      }
      pass.scanned += 1;
      if (options.select === undefined || options.select(record)) pass.kept.push(probe === undefined ? record : options.normalize(data as never, bounded));
    }
  }
  return pass;
}

/**
 * The API's `total_count` against what it sent. Every page must report the same count and
 * the pages together must hold exactly that many records. Below the cap the count is exact
 * (a count at the cap splits the range before this); no pages at all (a "totalPage is
 * over." on page 1) claim nothing and hold nothing.
 */
function countMismatch(pass: RangePass, from: number, to: number, attempt: number): CountMismatch | undefined {
  if (pass.servedTo !== undefined && pass.servedTo < to) return { from, to, reported: pass.reported, received: pass.received, attempt, servedTo: pass.servedTo };
  const first = pass.reported[0];
  if (first === undefined) return undefined;
  if (pass.reported.every((count) => count === first) && pass.received === first) return undefined;
  return { from, to, reported: pass.reported, received: pass.received, attempt };
}

function exceeds(page: ListResponse<unknown>, countCap: number, pageSize: number, maxPages: number): boolean {
  const { total_count } = page.paging;
  return total_count >= countCap || Math.ceil(total_count / pageSize) > maxPages;
}
