import type { Paginate } from "./fetch-window.js";

/**
 * The records of one block read from the node (its transactions with their receipts, or
 * its call traces) as the one page of a per-block source (the poller asks per block, as for
 * operation 8): the block read once, its count exact, so the window machinery (ordering,
 * bounds, deduplication, one commit per block) applies as is.
 */
export function paginateBlocks<R>(reader: { read(block: number, signal: AbortSignal): Promise<R[]> }): Paginate {
  return async function* (range, signal) {
    for (let block = range.from; block <= range.to; block++) {
      const results = await reader.read(block, signal);
      yield { results, paging: { total_count: results.length, current_page: 1, last: true, total_page: 1 } };
    }
  };
}
