import type { BlockTransactionsReader } from "../chain/block-transactions.js";
import type { Paginate } from "./fetch-window.js";

/**
 * The node's transactions of one block as the one page of a per-block source (the poller
 * asks per block, as for operation 8): the block read once, its count exact, so the
 * window machinery (ordering, bounds, deduplication, one commit per block) applies as is.
 */
export function paginateBlockTransactions(reader: BlockTransactionsReader): Paginate {
  return async function* (range, signal) {
    for (let block = range.from; block <= range.to; block++) {
      const results = await reader.read(block, signal);
      yield { results, paging: { total_count: results.length, current_page: 1, last: true, total_page: 1 } };
    }
  };
}
