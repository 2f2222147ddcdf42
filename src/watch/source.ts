import { createHash } from "node:crypto";
import type { ExplorerSourceOperation, NodeSourceOperation } from "../families/define-family.js";
import { familyDefinitions } from "../families/registry.js";
import type { RecordFamily } from "../model/record.js";

export type { ExplorerSourceOperation };

/**
 * What a source polls: an explorer operation, or one of the node's: `blockTransactions`, the
 * top-level transactions of each block with their receipts (JSON-RPC kaia_getBlockReceipts),
 * `nodeEventLogs` and `nodeNftTransfers`, the log query (eth_getLogs) of every node-read
 * watch of the family, `nodeInternalTransactions`, each block's call traces
 * (debug_traceBlockByNumber); no explorer credits. With an `address` or `account` a node
 * operation names one watch's share of it: never polled, only the key its position is kept
 * under (see plan-transactions.ts and plan-node-logs.ts).
 */
export type SourceOperation = ExplorerSourceOperation | NodeSourceOperation;

/** True for the sources read from the node rather than the explorer. */
export function isNodeOperation(operation: SourceOperation): operation is NodeSourceOperation {
  return operation === "blockTransactions" || operation === "nodeEventLogs" || operation === "nodeNftTransfers" || operation === "nodeInternalTransactions";
}

/** The node's log query (eth_getLogs): one window a request, every node-read watch of the family together. */
export function isNodeLogOperation(operation: SourceOperation): operation is "nodeEventLogs" | "nodeNftTransfers" {
  return operation === "nodeEventLogs" || operation === "nodeNftTransfers";
}

/** Sources that read one block per request: a chunk (a commit) per block. */
export function isPerBlockOperation(operation: SourceOperation): boolean {
  return operation === "blockInternalTransactions" || operation === "blockTransactions" || operation === "nodeInternalTransactions";
}

/** The family each operation yields, from the family definitions' readers. */
export const FAMILY_OF_OPERATION: Readonly<Record<SourceOperation, RecordFamily>> = Object.fromEntries(
  familyDefinitions().flatMap((definition) => [...definition.readers.explorer, ...definition.readers.node].map((operation) => [operation, definition.name])),
) as Record<SourceOperation, RecordFamily>;

/**
 * What a source asks the explorer for: one operation, one address and one server-side
 * filter. Everything that changes the answer is in here, so that its hash can name the
 * cursor: a changed filter gets a new cursor instead of silently inheriting the old one's
 * position (and skipping the blocks the old filter did not cover).
 */
export interface SourceDefinition {
  network: string;
  operation: SourceOperation;
  /** Lowercase. The account, token contract or emitting contract; absent for operation 8. */
  address?: string;
  /** topic0, lowercase 0x hash (operation 11). */
  signature?: string;
  /** Lowercase (operation 3). */
  contractAddress?: string;
  /** Decimal text (operation 4). */
  tokenId?: string;
  /** Lowercase: the account of a node-read watch's share (its NFT transfers, or its transfers of the token `address`). */
  account?: string;
  /** topic0s, lowercase, sorted: the events of a node-read contract watch's share (absent: every event). */
  topics?: readonly string[];
  /**
   * The accounts or contracts watch whose share this is (its name). Its addresses are not in
   * the key: a list that gains or loses an address keeps its position.
   */
  list?: string;
}

export function sourceKey(definition: SourceDefinition): string {
  // Fixed key order: the hash must not depend on how the object was built.
  // The node's fields only when present: every explorer source keeps the key it always had.
  const node = definition.account === undefined && definition.topics === undefined && definition.list === undefined ? [] : [definition.account ?? null, definition.topics ?? null, ...(definition.list === undefined ? [] : [definition.list])];
  const canonical = JSON.stringify([definition.network, definition.operation, definition.address ?? null, definition.signature ?? null, definition.contractAddress ?? null, definition.tokenId ?? null, ...node]);
  return `src_${createHash("sha256").update(canonical).digest("hex").slice(0, 16)}`;
}

export function describeSource(definition: SourceDefinition): string {
  const short = (value: string) => `${value.slice(0, 8)}…${value.slice(-4)}`;
  switch (definition.operation) {
    case "accountEventLogs":
      return `event logs of ${definition.address}${definition.signature ? ` (topic0 ${short(definition.signature)})` : ""}`;
    case "accountNftTransfers":
      return `NFT transfers of account ${definition.address}${definition.contractAddress ? ` in ${definition.contractAddress}` : ""}`;
    case "nftTransfers":
      return `NFT transfers of collection ${definition.address}${definition.tokenId !== undefined ? ` token ${definition.tokenId}` : ""}`;
    case "accountInternalTransactions":
      return `internal transactions of account ${definition.address}`;
    case "blockInternalTransactions":
      return "internal transactions of every block";
    case "blockTransactions":
      return definition.address === undefined ? "top-level transactions of every block (node)" : `top-level transactions of account ${definition.address} (node)`;
    case "nodeInternalTransactions":
      return definition.address === undefined ? "internal transactions of every block (node traces)" : `internal transactions of account ${definition.address} (node traces)`;
    case "nodeEventLogs":
      if (definition.list !== undefined && definition.address !== undefined) return `transfers of token ${definition.address} from or to the accounts of watch ${definition.list} (node)`;
      if (definition.list !== undefined) return `event logs of the contracts of watch ${definition.list}${definition.topics ? ` (topic0 ${definition.topics.map(short).join(", ")})` : ""} (node)`;
      if (definition.account !== undefined) return `transfers of token ${definition.address} from or to ${definition.account} (node)`;
      if (definition.address === undefined) return "event logs of every node-read watch (node)";
      return `event logs of ${definition.address}${definition.topics ? ` (topic0 ${definition.topics.map(short).join(", ")})` : ""} (node)`;
    case "nodeNftTransfers":
      if (definition.list !== undefined) return `NFT transfers of the accounts of watch ${definition.list}${definition.contractAddress ? ` in ${definition.contractAddress}` : ""} (node)`;
      if (definition.account !== undefined) return `NFT transfers of account ${definition.account}${definition.contractAddress ? ` in ${definition.contractAddress}` : ""} (node)`;
      if (definition.address === undefined) return "NFT transfers of every node-read watch (node)";
      return `NFT transfers of collection ${definition.address}${definition.tokenId !== undefined ? ` token ${definition.tokenId}` : ""} (node)`;
  }
}
