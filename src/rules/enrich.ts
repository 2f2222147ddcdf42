import type { Common } from "../common/common.js";
import { describeError, isKaiawatchError } from "../common/errors.js";
import type { Enrichment } from "../model/enrichment.js";
import type { ExplorerClient } from "../explorer/client.js";
import { ExplorerBudgetExhaustedError, shouldRetry } from "../explorer/errors.js";
import { OPERATIONS, type OperationName } from "../explorer/operations.js";
import type { AlertDocument } from "../model/alert-document.js";
import { createEnrichmentCache } from "./enrich-cache.js";
import { enrichmentPlanner, type Lookup, type Plan } from "./enrichment-plan.js";

/** The explorer calls enrichment makes; the daemon passes its one client, whose meter counts the credits. */
export type EnrichmentClient = Pick<
  ExplorerClient,
  "nftItem" | "transactionInternalTransactions" | "transactionEventLogs" | "transactionNftTransfers" | "nftInventoryDetails" | "accountNftInventories" | "meter"
>;

export interface EnricherOptions {
  client: EnrichmentClient;
  /** Most answers kept (default 2,000). */
  cacheEntries?: number;
  /** Most JSON characters kept over all answers (default 8,000,000). */
  cacheChars?: number;
  /**
   * How long an answer about the chain's current state (an NFT's holder, an inventory) is
   * reused, in ms (default 60,000). Answers about a transaction are kept until evicted:
   * Kaia has immediate finality, so they never change.
   */
  stateTtlMs?: number;
  /** Lookups in flight at once (default 4); the client's rate limit still applies. */
  concurrency?: number;
  /**
   * The fraction of the daily credit budget enrichment leaves for polling (default 0.1):
   * once less than this remains, lookups are skipped so that scanning, which guarantees
   * that no record is missed, keeps its credits.
   */
  budgetReserve?: number;
  /** After a lookup failed because the explorer is down or out of quota, skip lookups for this long, in ms (default 60,000). */
  pauseMs?: number;
  /** Most explorer requests for one batch of matches (default 200); the rest are skipped, so a burst cannot stall the scan. */
  maxRequestsPerBatch?: number;
  /** Entries fetched by one list lookup, one page (default 200); the alert keeps the first 25 and the total. */
  pageSize?: number;
}

export interface EnricherStats {
  /** Explorer requests made for enrichment that succeeded. */
  requests: number;
  /** Credits those requests cost. */
  credits: number;
}

/**
 * What enrichment reads of a match: the rule's `enrich` list and the alert it fills in.
 * The watch layer's Match satisfies it; declared here so that rules never import watch.
 */
export interface EnrichableMatch {
  rule: { enrich?: readonly Enrichment[] };
  alert: AlertDocument;
}

export interface Enricher {
  /**
   * Adds `alert.enrichment[kind]` to every match whose rule asks for it. Never throws for a
   * failed lookup (the value becomes `{ error }`); throws only when `signal` is aborted.
   */
  enrich(matches: readonly EnrichableMatch[], signal: AbortSignal): Promise<void>;
  stats(): EnricherStats;
}

import type { LookupOutcome } from "./enrichment-plan.js";
export type { LookupOutcome } from "./enrichment-plan.js";

type Resolution = { ok: true; value: unknown; fetched: boolean } | { ok: false; error: string; code: string | undefined; skipped: boolean };

const DEFAULTS = {
  cacheEntries: 2000,
  cacheChars: 8_000_000,
  stateTtlMs: 60_000,
  concurrency: 4,
  budgetReserve: 0.1,
  pauseMs: 60_000,
  maxRequestsPerBatch: 200,
  pageSize: 200,
};

/**
 * Extra explorer lookups for matched records (rule `enrich:`), made after matching and
 * before the alerts are committed. Each distinct lookup is made once per batch and cached
 * for the run. A failed lookup never holds an alert back: the client's own retries are the
 * only retries, then the alert goes out with `enrichment[kind] = { error }`. When the
 * explorer is down, out of quota or the budget is nearly spent, further lookups are skipped
 * at once (marked the same way) instead of stalling every window behind retries.
 */
export function createEnricher(common: Common, options: EnricherOptions): Enricher {
  const settings = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as typeof DEFAULTS & EnricherOptions;
  const { client } = options;
  const logger = common.logger.child({ subsystem: "enrichment" });
  const cache = createEnrichmentCache({ maxEntries: settings.cacheEntries, maxChars: settings.cacheChars, now: common.now });
  const totals: EnricherStats = { requests: 0, credits: 0 };
  /** While set and in the future, lookups are skipped: the explorer failed one for a reason that will not pass in seconds. */
  let pausedUntil = 0;
  let pauseReason = "";
  let creditsInFlight = 0;
  const plan = enrichmentPlanner(client, settings);

  /** Why a request must not be sent now, or undefined. */
  function refusal(operation: OperationName, requestsSoFar: number): string | undefined {
    if (pausedUntil > common.now()) return `not looked up: ${pauseReason}; lookups resume at ${new Date(pausedUntil).toISOString()}`;
    if (requestsSoFar >= settings.maxRequestsPerBatch) return `not looked up: more than ${settings.maxRequestsPerBatch} lookups in one window`;
    const budget = client.meter.dailyBudget;
    if (budget !== undefined) {
      const reserve = Math.ceil(budget * settings.budgetReserve);
      // Lookups still in flight have not been charged yet, but will be.
      const remaining = client.meter.remainingToday() - creditsInFlight;
      if (remaining - OPERATIONS[operation].cost < reserve) {
        return `not looked up: the daily credit budget is nearly spent (${Math.max(0, remaining)} of ${budget} left; ${reserve} are kept for polling)`;
      }
    }
    return undefined;
  }

  async function enrich(matches: readonly EnrichableMatch[], signal: AbortSignal): Promise<void> {
    const plans: Plan[] = [];
    for (const { rule, alert } of matches) for (const kind of rule.enrich ?? []) plans.push(plan(kind, alert));
    if (plans.length === 0) return;

    // Each distinct lookup once: from the cache, or one request shared by every alert that needs it.
    const resolutions = new Map<string, Resolution>();
    const pending = new Map<string, Lookup>();
    for (const p of plans) {
      if (!("lookups" in p)) continue;
      for (const lookup of p.lookups) {
        if (resolutions.has(lookup.key) || pending.has(lookup.key)) continue;
        const cached = cache.get(lookup.key);
        if (cached !== undefined) resolutions.set(lookup.key, { ok: true, value: cached, fetched: false });
        else pending.set(lookup.key, lookup);
      }
    }

    let started = 0;
    let failures = 0;
    const run = async (lookup: Lookup): Promise<Resolution> => {
      const refused = refusal(lookup.operation, started);
      if (refused !== undefined) return { ok: false, error: refused, code: undefined, skipped: true };
      started += 1;
      const cost = OPERATIONS[lookup.operation].cost;
      creditsInFlight += cost;
      try {
        const value = await lookup.fetch(signal);
        totals.requests += 1;
        totals.credits += cost;
        cache.set(lookup.key, value, lookup.ttlMs);
        return { ok: true, value, fetched: true };
      } catch (error) {
        // A cancelled tick commits nothing: the abort goes up, the window is scanned again.
        if (signal.aborted) throw signal.reason;
        const message = common.secrets.redact(describeError(error));
        if (shouldRetry(error) || error instanceof ExplorerBudgetExhaustedError) {
          // The client has already retried: the explorer is down or out of quota for a while.
          pausedUntil = common.now() + settings.pauseMs;
          pauseReason = `an earlier lookup failed (${message})`;
        }
        failures += 1;
        if (failures === 1) logger.warn({ operation: lookup.operation, error: message }, "enrichment lookup failed; the alert is sent without it");
        else logger.debug({ operation: lookup.operation, error: message }, "enrichment lookup failed");
        return { ok: false, error: message, code: isKaiawatchError(error) ? error.code : undefined, skipped: false };
      } finally {
        creditsInFlight -= cost;
      }
    };

    const queue = [...pending.values()];
    let next = 0;
    const worker = async () => {
      while (next < queue.length) {
        const lookup = queue[next++] as Lookup;
        resolutions.set(lookup.key, await run(lookup));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(settings.concurrency, queue.length)) }, worker));

    const claimed = new Set<string>();
    for (const p of plans) {
      let value: unknown;
      let outcome: LookupOutcome;
      if (!("lookups" in p)) {
        value = p.value;
        outcome = p.outcome;
      } else {
        const parts = p.lookups.map((l) => resolutions.get(l.key) as Resolution);
        const failed = parts.find((r): r is Extract<Resolution, { ok: false }> => !r.ok);
        if (failed) {
          value = failed.code === undefined ? { error: failed.error } : { error: failed.error, code: failed.code };
          outcome = failed.skipped ? "skipped" : "failed";
        } else {
          value = p.build(parts.map((r) => (r as Extract<Resolution, { ok: true }>).value));
          // The first alert served by a request counts it; the others were served from it.
          const fresh = p.lookups.filter((l, i) => (parts[i] as Extract<Resolution, { ok: true }>).fetched && !claimed.has(l.key));
          for (const l of fresh) claimed.add(l.key);
          outcome = fresh.length > 0 ? "fetched" : "cached";
        }
      }
      p.alert.enrichment = { ...p.alert.enrichment, [p.kind]: value };
      common.metrics.enrichmentLookups.inc({ kind: p.kind, outcome });
    }
    logger.debug({ alerts: matches.length, lookups: plans.length, requests: started, failures }, "enrichment done");
  }

  return { enrich, stats: () => ({ ...totals }) };
}
