import { createHash } from "node:crypto";
import type { OperationName } from "../explorer/operations.js";
import type { RecordFamily } from "../model/record.js";

/** The list operations that take a block range (or, for 8, a block) and so can be polled. */
export type SourceOperation = Extract<OperationName, "accountEventLogs" | "accountNftTransfers" | "nftTransfers" | "accountInternalTransactions" | "blockInternalTransactions">;

export const FAMILY_OF_OPERATION: Record<SourceOperation, RecordFamily> = {
  accountEventLogs: "event_logs",
  accountNftTransfers: "nft_transfers",
  nftTransfers: "nft_transfers",
  accountInternalTransactions: "internal_transactions",
  blockInternalTransactions: "internal_transactions",
};

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
  }
}
