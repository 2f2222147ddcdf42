import { OPERATIONS, type OperationName } from "../explorer/operations.js";
import { RECORD_FAMILIES, type RecordFamily } from "./record.js";

/** The extra lookups a rule may ask for (`enrich:`), in the order config documents them. */
export const ENRICHMENTS = ["nft", "tx_internal", "tx_logs", "tx_nft_transfers", "inventory"] as const;
export type Enrichment = (typeof ENRICHMENTS)[number];

interface KindSpec {
  /** The record families whose matches the lookup makes sense for. */
  families: readonly RecordFamily[];
  /** The explorer operations called once per distinct lookup (not per alert). */
  operations: readonly OperationName[];
  /** Why the kind needs its families, for the config error. */
  needs: string;
}

/**
 * What each enrichment may be asked of. `nft` and `inventory` look up the token a record
 * moved and its recipient, which only NFT transfers carry; the three per-transaction
 * lookups need only a transaction hash, which every family has.
 */
export const ENRICHMENT_KINDS: Readonly<Record<Enrichment, KindSpec>> = {
  nft: { families: ["nft_transfers"], operations: ["nftItem"], needs: "it looks up the transferred token (contract and token id)" },
  inventory: { families: ["nft_transfers"], operations: ["nftInventoryDetails", "accountNftInventories"], needs: "it looks up what the recipient of an NFT transfer holds" },
  tx_internal: { families: RECORD_FAMILIES, operations: ["transactionInternalTransactions"], needs: "it needs a transaction hash" },
  tx_logs: { families: RECORD_FAMILIES, operations: ["transactionEventLogs"], needs: "it needs a transaction hash" },
  tx_nft_transfers: { families: RECORD_FAMILIES, operations: ["transactionNftTransfers"], needs: "it needs a transaction hash" },
};

/** Credits one uncached lookup of the kind costs (the sum of its operations' costs). */
export function enrichmentCost(kind: Enrichment): number {
  return ENRICHMENT_KINDS[kind].operations.reduce((sum, op) => sum + OPERATIONS[op].cost, 0);
}
