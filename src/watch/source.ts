import { createHash } from "node:crypto";
import type { ExplorerSourceOperation, NodeSourceOperation } from "../families/define-family.js";
import { familyDefinitions } from "../families/registry.js";
import type { RecordFamily } from "../model/record.js";

export type { ExplorerSourceOperation };

/**
 * What a source polls: an explorer operation, or `blockTransactions`, the node's top-level
 * transactions of each block with their receipts (JSON-RPC kaia_getBlockReceipts, no
 * explorer credits). With an `address` the latter names one account watch's share of it:
 * never polled, only the key its position is kept under (see plan-transactions.ts).
 */
export type SourceOperation = ExplorerSourceOperation | NodeSourceOperation;

/** True for the sources read from the node rather than the explorer. */
export function isNodeOperation(operation: SourceOperation): operation is "blockTransactions" {
  return operation === "blockTransactions";
}

/** Sources that read one block per request: a chunk (a commit) per block. */
export function isPerBlockOperation(operation: SourceOperation): boolean {
  return operation === "blockInternalTransactions" || operation === "blockTransactions";
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
}

export function sourceKey(definition: SourceDefinition): string {
  // Fixed key order: the hash must not depend on how the object was built.
  const canonical = JSON.stringify([definition.network, definition.operation, definition.address ?? null, definition.signature ?? null, definition.contractAddress ?? null, definition.tokenId ?? null]);
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
  }
}
