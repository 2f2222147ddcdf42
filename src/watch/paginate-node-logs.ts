import type { BlockTimeReader } from "../chain/block-time.js";
import type { EventDecoder } from "../chain/event-abi.js";
import type { LogFilter, LogReader, NodeLog } from "../chain/get-logs.js";
import { eventLogOf, nftTransfersOf } from "../chain/log-records.js";
import type { Paginate } from "./fetch-window.js";

/**
 * A node log source's window as one page: every log of its filters in the range, read at
 * once (the reader splits by range or address batch when the node's result or time limit
 * answers), built into the explorer's record shape, so that the window machinery (bounds,
 * order, identity, one commit) applies as is. `total_count` is the page's own count: no
 * explorer cap applies (the poller is given none). NFT transfers carry their block's time as
 * `datetime`, read only for the blocks that hold one.
 */
export function paginateNodeLogs(reader: LogReader, filters: readonly LogFilter[], build: (logs: NodeLog[], signal: AbortSignal) => Promise<unknown[]>): Paginate {
  return async function* (range, signal) {
    const results = await build(await reader.read(range, filters, signal), signal);
    yield { results, paging: { total_count: results.length, current_page: 1, last: true, total_page: 1 } };
  };
}

/** Event logs, their names and arguments from the decoder (the config's signatures and the standard ones). */
export function eventLogRecords(decoder: EventDecoder): (logs: NodeLog[]) => Promise<unknown[]> {
  return async (logs) => logs.map((log) => eventLogOf(log, decoder));
}

/** NFT transfers (one per id of a batch), dated by their block's timestamp. */
export function nftTransferRecords(blockTime: BlockTimeReader): (logs: NodeLog[], signal: AbortSignal) => Promise<unknown[]> {
  return async (logs, signal) => {
    // Which logs are transfers, before any block time is read: most logs of a query are.
    const transfers = logs.filter((log) => nftTransfersOf(log, "").length > 0);
    const times = new Map<number, string>();
    for (const block of new Set(transfers.map((log) => log.blockNumber))) times.set(block, new Date((await blockTime(block, signal)) * 1000).toISOString());
    return transfers.flatMap((log) => nftTransfersOf(log, times.get(log.blockNumber) as string));
  };
}
