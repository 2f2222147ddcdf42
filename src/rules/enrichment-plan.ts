import type { Enrichment } from "../model/enrichment.js";
import { familiesEnrichedBy } from "../families/registry.js";
import { ENRICHMENT_KINDS } from "../model/enrichment.js";
import type { OperationName } from "../explorer/operations.js";
import type { InternalTransactionOfTransaction, ListResponse, NftTransfer } from "../explorer/types.js";
import { isBurnAddress } from "../chain/address.js";
import type { AlertDocument } from "../model/alert-document.js";
import { ENRICHMENT_LIST_MAX, boundValue } from "./bound-value.js";
import type { EnrichmentClient } from "./enrich.js";

/** The outcomes counted by kaiawatch_enrichment_lookups_total, per alert and kind. */
export type LookupOutcome = "fetched" | "cached" | "failed" | "skipped";

/** One explorer request whose answer can serve many alerts. */
export interface Lookup {
  key: string;
  operation: OperationName;
  /** Absent: the answer never goes stale. */
  ttlMs?: number;
  fetch(signal: AbortSignal): Promise<unknown>;
}

/** What one alert's enrichment of one kind needs: a value at once, or lookups and how to combine them. */
export type Plan = { kind: Enrichment; alert: AlertDocument; value: unknown; outcome: LookupOutcome } | { kind: Enrichment; alert: AlertDocument; lookups: Lookup[]; build(values: unknown[]): unknown };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const DIGITS = /^\d+$/;

/**
 * What each enrichment kind needs for one alert: the explorer lookups (each keyed, so that
 * alerts that need the same answer share one request) and how to build the value from
 * their answers, or a value at once when the kind does not apply to the record.
 */
export function enrichmentPlanner(client: EnrichmentClient, settings: { stateTtlMs: number; pageSize: number }): (kind: Enrichment, alert: AlertDocument) => Plan {
  const list = (response: ListResponse<unknown>, name: string) => ({ total: response.paging.total_count, [name]: boundValue(response.results.slice(0, ENRICHMENT_LIST_MAX)) });
  const page = { page: 1, size: settings.pageSize };

  function txLookup(kind: "tx_internal" | "tx_logs" | "tx_nft_transfers", hash: string): Lookup {
    const operation = ENRICHMENT_KINDS[kind].operations[0] as OperationName;
    const key = `${operation}|${hash.toLowerCase()}`;
    switch (kind) {
      case "tx_internal":
        return { key, operation, fetch: async (signal) => callTree(await client.transactionInternalTransactions({ transactionHash: hash, ...page }, { signal })) };
      case "tx_logs":
        return { key, operation, fetch: async (signal) => list(await client.transactionEventLogs({ transactionHash: hash, ...page }, { signal }), "logs") };
      case "tx_nft_transfers":
        return { key, operation, fetch: async (signal) => list(await client.transactionNftTransfers({ transactionHash: hash, ...page }, { signal }), "transfers") };
    }
  }

  function plan(kind: Enrichment, alert: AlertDocument): Plan {
    const skip = (error: string): Plan => ({ kind, alert, value: { error }, outcome: "skipped" });
    if (!(familiesEnrichedBy(kind) as readonly string[]).includes(alert.source)) return skip(`${kind} does not apply to ${alert.source} records`);
    if (kind === "tx_internal" || kind === "tx_logs" || kind === "tx_nft_transfers") {
      const hash = alert.transaction_hash;
      if (hash === null || !HASH.test(hash)) return skip("the record carries no transaction hash");
      return { kind, alert, lookups: [txLookup(kind, hash)], build: ([value]) => value };
    }
    const transfer = alert.record as NftTransfer;
    const contract = transfer.contract?.contract_address;
    if (typeof contract !== "string" || !ADDRESS.test(contract)) return skip("the transfer names no token contract");
    const tokenAddress = contract.toLowerCase();
    if (kind === "nft") {
      const tokenId = String(transfer.token_id);
      if (!DIGITS.test(tokenId)) return skip("the transfer's token id is not a decimal number");
      return {
        kind,
        alert,
        lookups: [{ key: `nftItem|${tokenAddress}|${tokenId}`, operation: "nftItem", ttlMs: settings.stateTtlMs, fetch: async (signal) => boundValue(await client.nftItem({ tokenAddress, tokenId }, { signal })) }],
        build: ([value]) => value,
      };
    }
    // inventory: what the recipient holds once the transfer is done.
    const to = transfer.to;
    if (typeof to !== "string" || !ADDRESS.test(to) || isBurnAddress(to)) return { kind, alert, value: { holder: null, note: "burnt: the tokens went to no holder" }, outcome: "skipped" };
    const holder = to.toLowerCase();
    return {
      kind,
      alert,
      lookups: [
        {
          key: `nftInventoryDetails|${tokenAddress}|${holder}`,
          operation: "nftInventoryDetails",
          ttlMs: settings.stateTtlMs,
          fetch: async (signal) => list(await client.nftInventoryDetails({ tokenAddress, keyword: holder, ...page }, { signal }), "tokens"),
        },
        {
          key: `accountNftInventories|${holder}`,
          operation: "accountNftInventories",
          ttlMs: settings.stateTtlMs,
          fetch: async (signal) => list(await client.accountNftInventories({ accountAddress: holder, ...page }, { signal }), "items"),
        },
      ],
      build: ([collection, account]) => ({ holder, collection: { contract: tokenAddress, ...(collection as object) }, account }),
    };
  }

  return plan;
}

/** The call tree of a transaction, led by what a person wants first: why it failed. */
function callTree(response: ListResponse<InternalTransactionOfTransaction>): Record<string, unknown> {
  const calls = response.results;
  const failed = calls.filter((c) => c.error !== undefined && c.error !== "");
  // The call that reverted carries the reason; without one, the deepest failed call says most.
  const reverted = calls.find((c) => c.reverted !== undefined);
  const deepest = failed.reduce<InternalTransactionOfTransaction | undefined>((d, c) => (d === undefined || c.level > d.level ? c : d), undefined);
  const out: Record<string, unknown> = {};
  const reason = reverted?.reverted?.message ?? deepest?.error;
  if (reason !== undefined) out.revert_reason = boundValue(reason);
  if (reverted?.reverted !== undefined) out.reverted_contract = reverted.reverted.contract;
  out.failed_calls = failed.length;
  out.total = response.paging.total_count;
  out.calls = boundValue(calls.slice(0, ENRICHMENT_LIST_MAX));
  return out;
}
