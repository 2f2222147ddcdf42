import type { ExplorerClient } from "../explorer/client.js";
import type { Paginate } from "../watch/fetch-window.js";
import type { SourceDefinition } from "../watch/source.js";

/** The explorer query of one source over a block range (operation 8: one block, `from`). */
export function paginateSource(client: ExplorerClient, definition: SourceDefinition, size: number): Paginate {
  const address = definition.address ?? "";
  switch (definition.operation) {
    case "accountEventLogs":
      return (range, signal) => client.paginate("accountEventLogs", { accountAddress: address, signature: definition.signature, blockNumberStart: range.from, blockNumberEnd: range.to, size }, { signal });
    case "accountNftTransfers":
      return (range, signal) => client.paginate("accountNftTransfers", { accountAddress: address, contractAddress: definition.contractAddress, blockNumberStart: range.from, blockNumberEnd: range.to, size }, { signal });
    case "nftTransfers":
      return (range, signal) => client.paginate("nftTransfers", { tokenAddress: address, tokenId: definition.tokenId, blockNumberStart: range.from, blockNumberEnd: range.to, size }, { signal });
    case "accountInternalTransactions":
      return (range, signal) => client.paginate("accountInternalTransactions", { accountAddress: address, blockNumberStart: range.from, blockNumberEnd: range.to, size }, { signal });
    case "blockInternalTransactions":
      return (range, signal) => client.paginate("blockInternalTransactions", { blockNumber: range.from, size }, { signal });
    case "blockTransactions":
    case "nodeEventLogs":
    case "nodeNftTransfers":
    case "nodeInternalTransactions":
      throw new Error(`source ${definition.operation} reads the node, not the explorer (node-paginate.ts)`);
  }
}
