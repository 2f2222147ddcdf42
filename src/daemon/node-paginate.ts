import { cachedBlockTimes, readBlockTime } from "../chain/block-time.js";
import { createEventDecoder } from "../chain/event-abi.js";
import { createLogReader } from "../chain/get-logs.js";
import type { JsonRpc } from "../chain/json-rpc.js";
import type { Common } from "../common/common.js";
import type { Config } from "../config/types.js";
import type { Paginate } from "../watch/fetch-window.js";
import { eventLogRecords, nftTransferRecords, paginateNodeLogs } from "../watch/paginate-node-logs.js";
import { paginateBlocks } from "../watch/paginate-blocks.js";
import { createBlockTracesReader } from "../chain/block-traces.js";
import type { PlannedSource } from "../watch/poller.js";
import { createTransactionsReader } from "../watch/transactions-reader.js";

/**
 * The query of each node source (the daemon's and `replay`'s): the transactions source reads
 * blocks' receipts, the traces source blocks' call traces, the log sources read eth_getLogs
 * with their members' filters, all through one JSON-RPC client (its rate limit). One event
 * decoder for the config's event signatures.
 */
export function createNodePaginators(common: Common, config: Config, rpc: JsonRpc): (source: PlannedSource) => Paginate {
  let transactions: Paginate | undefined;
  let traces: Paginate | undefined;
  const reader = createLogReader(common, { rpc, maxRequestBytes: config.chain.max_request_bytes });
  const signatures = config.watches.flatMap((w) => (w.kind === "contract" || w.kind === "contracts" ? w.events.filter((e) => !e.startsWith("0x")) : []));
  const events = eventLogRecords(createEventDecoder(signatures));
  // One cache of block times for the NFT transfers' and the traces' `datetime`: both read the same recent blocks.
  const blockTime = cachedBlockTimes((block, signal) => readBlockTime(rpc, block, signal));
  const transfers = nftTransferRecords(blockTime);
  return (source) => {
    switch (source.definition.operation) {
      case "nodeEventLogs":
        return paginateNodeLogs(reader, source.logFilters ?? [], events);
      case "nodeNftTransfers":
        return paginateNodeLogs(reader, source.logFilters ?? [], transfers);
      case "nodeInternalTransactions":
        return (traces ??= paginateBlocks(createBlockTracesReader(common, { rpc, blockTime })));
      default:
        return (transactions ??= paginateBlocks(createTransactionsReader(common, config, rpc)));
    }
  };
}
