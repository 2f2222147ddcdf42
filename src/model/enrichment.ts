import { OPERATIONS, type OperationName } from "../explorer/operations.js";

/** The extra lookups a rule may ask for (`enrich:`), in the order config documents them. */
export const ENRICHMENTS = ["nft", "tx_internal", "tx_logs", "tx_nft_transfers", "inventory"] as const;
export type Enrichment = (typeof ENRICHMENTS)[number];

interface KindSpec {
  /**
   * "transaction": it needs only the transaction hash every record has; "record": it needs
   * what some families' records carry, and those families name it (their `enrichments`).
   */
  of: "transaction" | "record";
  /** The explorer operations called once per distinct lookup (not per alert). */
  operations: readonly OperationName[];
  /** Why the kind needs its families, for the config error. */
  needs: string;
}

/**
 * What each enrichment may be asked of. `nft` and `inventory` look up the token a record
 * moved and its recipient, which only NFT transfers carry (src/families/nft-transfers.ts);
 * the three per-transaction lookups need only a transaction hash, which every family has.
 */
export const ENRICHMENT_KINDS = {
  nft: { of: "record", operations: ["nftItem"], needs: "it looks up the transferred token (contract and token id)" },
  inventory: { of: "record", operations: ["nftInventoryDetails", "accountNftInventories"], needs: "it looks up what the recipient of an NFT transfer holds" },
  tx_internal: { of: "transaction", operations: ["transactionInternalTransactions"], needs: "it needs a transaction hash" },
  tx_logs: { of: "transaction", operations: ["transactionEventLogs"], needs: "it needs a transaction hash" },
  tx_nft_transfers: { of: "transaction", operations: ["transactionNftTransfers"], needs: "it needs a transaction hash" },
} as const satisfies Readonly<Record<Enrichment, KindSpec>>;

/** The lookups that need more of a record than its transaction hash: a family definition names those its records carry what for. */
export type RecordEnrichment = { [K in Enrichment]: (typeof ENRICHMENT_KINDS)[K]["of"] extends "record" ? K : never }[Enrichment];

/** Credits one uncached lookup of the kind costs (the sum of its operations' costs). */
export function enrichmentCost(kind: Enrichment): number {
  return ENRICHMENT_KINDS[kind].operations.reduce((sum, op) => sum + OPERATIONS[op].cost, 0);
}
