import type { ConfigIssue } from "../config/errors.js";
import type { Config, Enrichment } from "../config/types.js";
import { OPERATIONS, type OperationName } from "../explorer/operations.js";
import type { RecordFamily } from "../model/record.js";

export type { Enrichment } from "../config/types.js";

interface KindSpec {
  /** The record families whose matches the lookup makes sense for. */
  families: readonly RecordFamily[];
  /** The explorer operations called once per distinct lookup (not per alert). */
  operations: readonly OperationName[];
  /** Why the kind needs its families, for the config error. */
  needs: string;
}

const EVERY_FAMILY: readonly RecordFamily[] = ["event_logs", "nft_transfers", "internal_transactions"];

/**
 * What each enrichment may be asked of. `nft` and `inventory` look up the token a record
 * moved and its recipient, which only NFT transfers carry; the three per-transaction
 * lookups need only a transaction hash, which every family has.
 */
export const ENRICHMENT_KINDS: Readonly<Record<Enrichment, KindSpec>> = {
  nft: { families: ["nft_transfers"], operations: ["nftItem"], needs: "it looks up the transferred token (contract and token id)" },
  inventory: { families: ["nft_transfers"], operations: ["nftInventoryDetails", "accountNftInventories"], needs: "it looks up what the recipient of an NFT transfer holds" },
  tx_internal: { families: EVERY_FAMILY, operations: ["transactionInternalTransactions"], needs: "it needs a transaction hash" },
  tx_logs: { families: EVERY_FAMILY, operations: ["transactionEventLogs"], needs: "it needs a transaction hash" },
  tx_nft_transfers: { families: EVERY_FAMILY, operations: ["transactionNftTransfers"], needs: "it needs a transaction hash" },
};

/** Credits one uncached lookup of the kind costs (the sum of its operations' costs). */
export function enrichmentCost(kind: Enrichment): number {
  return ENRICHMENT_KINDS[kind].operations.reduce((sum, op) => sum + OPERATIONS[op].cost, 0);
}

/** A config check: every `enrich` entry fits its rule's source. */
export function checkEnrichments(config: Pick<Config, "rules">): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  config.rules.forEach((rule, index) => {
    rule.enrich.forEach((kind, position) => {
      const spec = ENRICHMENT_KINDS[kind];
      if (spec.families.includes(rule.source)) return;
      issues.push({
        path: ["rules", index, "enrich", position],
        message: `rule "${rule.name}": enrich "${kind}" applies only to ${spec.families.join(", ")} records (${spec.needs}); this rule reads ${rule.source}`,
      });
    });
  });
  return issues;
}
