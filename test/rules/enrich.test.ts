import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon, type Common } from "../../src/common/common.js";
import type { Enrichment } from "../../src/model/enrichment.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import type { EventLog, InternalTransactionListItem, NftTransfer } from "../../src/explorer/types.js";
import { buildAlert } from "../../src/rules/build-alert.js";
import { createEnricher, type Enricher, type EnricherOptions } from "../../src/rules/enrich.js";
import { createSimulator, type Simulator, type SimulatorOptions } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import type { Match, SourceRule } from "../../src/watch/source-rule.js";

/**
 * Enrichment against the simulator: each kind on records the chain really holds, with the
 * expected answer computed from the simulator's ground truth; caching counted by the
 * simulator's own request counter; faults and an exhausted budget never lose an alert.
 */
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ZERO = "0x0000000000000000000000000000000000000000";

interface Setup {
  sim: Simulator;
  client: ExplorerClient;
  enricher: Enricher;
  common: Common;
  clock: { ms: number };
}

async function setup(simOptions: SimulatorOptions = {}, enricherOptions: Partial<EnricherOptions> = {}, budget?: number): Promise<Setup> {
  const sim = await createSimulator({ seed: 5, initialBlocks: 120, ...simOptions });
  cleanups.push(() => sim.close());
  const clock = { ms: Date.now() };
  const common = createTestCommon({ now: () => clock.ms });
  const client = createExplorerClient(common, { baseUrl: sim.url, requestsPerSecond: 10_000, maxRetries: 1, retryBaseMs: 1, retryMaxMs: 5, ...(budget === undefined ? {} : { dailyCreditBudget: budget }) });
  cleanups.push(() => client.close());
  const enricher = createEnricher(common, { client, ...enricherOptions });
  return { sim, client, enricher, common, clock };
}

function matchOf(data: EventLog | NftTransfer | InternalTransactionListItem, family: keyof typeof NORMALIZERS, enrich: Enrichment[], ruleName = "rule"): Match {
  const record = NORMALIZERS[family](data as never);
  const rule: SourceRule = {
    name: ruleName,
    watch: "watch",
    notify: ["out"],
    enrich,
    test: () => true,
    toAlert: (r, now) => buildAlert({ rule: { name: ruleName }, watch: "watch", record: r, network: "simulated", explorerUrl: "https://kaiascan.io", now }),
  };
  return { rule, alert: rule.toAlert(record, new Date()), record };
}

const enrichmentOf = (match: Match, kind: Enrichment) => match.alert.enrichment?.[kind] as Record<string, unknown>;
const requestsOf = (sim: Simulator, op: string) => Object.values(sim.stats().requests[op] ?? {}).reduce((a, b) => a + b, 0);
const range = (sim: Simulator) => ({ from: 0, to: sim.head() });

async function lookupCounts(common: Common): Promise<Record<string, number>> {
  const metric = await common.metrics.enrichmentLookups.get();
  return Object.fromEntries(metric.values.map((v) => [`${v.labels.kind}/${v.labels.outcome}`, v.value]));
}

/** Every NFT transfer of every collection, oldest first. */
function allTransfers(sim: Simulator): NftTransfer[] {
  return sim.addresses.nftCollections.flatMap((c) => sim.truth.nftTransfers(c, range(sim)));
}

/** Balances by collection|token|holder after replaying every transfer: what the chain says each account holds. */
function holdings(sim: Simulator): Map<string, bigint> {
  const balances = new Map<string, bigint>();
  const add = (key: string, delta: bigint) => balances.set(key, (balances.get(key) ?? 0n) + delta);
  for (const t of allTransfers(sim).sort((a, b) => a.block_id - b.block_id)) {
    const contract = t.contract.contract_address.toLowerCase();
    const count = BigInt(t.token_count);
    if (t.from.toLowerCase() !== ZERO) add(`${contract}|${t.token_id}|${t.from.toLowerCase()}`, -count);
    if (t.to !== undefined && t.to.toLowerCase() !== ZERO) add(`${contract}|${t.token_id}|${t.to.toLowerCase()}`, count);
  }
  for (const [key, value] of balances) if (value <= 0n) balances.delete(key);
  return balances;
}

describe("enrichment of matched records, against the simulator", () => {
  it("tx_internal: a failed call's alert carries the revert reason of its transaction's call tree", async () => {
    const { sim, enricher } = await setup();
    const failed: InternalTransactionListItem[] = [];
    for (let b = sim.head() - 100; b <= sim.head(); b++) failed.push(...sim.truth.blockInternalTransactions(b).filter((r) => r.transaction_status?.status === "Fail"));
    expect(failed.length).toBeGreaterThan(3);
    const matches = failed.map((r) => matchOf(r, "internal_transactions", ["tx_internal"]));
    await enricher.enrich(matches, new AbortController().signal);
    for (const [i, match] of matches.entries()) {
      const record = failed[i] as InternalTransactionListItem;
      const tree = enrichmentOf(match, "tx_internal");
      expect(tree.revert_reason).toBe(record.transaction_status?.fail_message);
      const sameTx = sim.truth.blockInternalTransactions(record.block_id).filter((r) => r.transaction_hash === record.transaction_hash);
      expect(tree.total).toBe(sameTx.length);
      expect((tree.calls as { call_id: number }[]).map((c) => c.call_id)).toEqual(sameTx.slice(0, 25).map((r) => r.call_id));
      expect(tree.failed_calls).toBe(sameTx.filter((r) => r.error !== undefined).length);
    }
    // Many failed calls share a transaction: one request per transaction.
    expect(requestsOf(sim, "transactionInternalTransactions")).toBe(new Set(failed.map((r) => r.transaction_hash)).size);
  });

  it("nft: the token's collection name, metadata and current holder", async () => {
    const { sim, enricher } = await setup();
    const transfers = sim.truth.nftTransfers(sim.addresses.busyCollection, range(sim));
    const balances = holdings(sim);
    const matches = transfers.slice(-30).map((t) => matchOf(t, "nft_transfers", ["nft"]));
    await enricher.enrich(matches, new AbortController().signal);
    for (const match of matches) {
      const t = match.alert.record as NftTransfer;
      const item = enrichmentOf(match, "nft") as { info: { name: string; contract_address: string }; token_id: string; holder?: { address: string }; metadata?: { name?: string } };
      expect(item.info.contract_address.toLowerCase()).toBe(t.contract.contract_address.toLowerCase());
      expect(item.info.name).toBe("Kaia Kitties");
      expect(item.token_id).toBe(t.token_id);
      if (item.metadata?.name !== undefined) expect(item.metadata.name).toBe(`Kaia Kitties #${t.token_id}`);
      const holders = [...balances.keys()].filter((k) => k.startsWith(`${t.contract.contract_address.toLowerCase()}|${t.token_id}|`)).map((k) => k.split("|")[2]);
      expect(item.holder?.address.toLowerCase()).toBe(holders[0]);
    }
  });

  it("tx_logs and tx_nft_transfers: every log and NFT transfer of the record's transaction", async () => {
    const { sim, enricher } = await setup();
    const logs = sim.truth.accountEventLogs(sim.addresses.busyToken, range(sim)).slice(-20);
    const transfers = sim.truth.nftTransfers(sim.addresses.busyCollection, range(sim)).slice(-20);
    const logMatches = logs.map((l) => matchOf(l, "event_logs", ["tx_logs", "tx_nft_transfers"]));
    const transferMatches = transfers.map((t) => matchOf(t, "nft_transfers", ["tx_nft_transfers"]));
    await enricher.enrich([...logMatches, ...transferMatches], new AbortController().signal);

    const emitters = [...sim.addresses.tokens, ...sim.addresses.nftCollections, ...sim.addresses.contracts];
    const allLogs = emitters.flatMap((a) => sim.truth.accountEventLogs(a, range(sim)));
    const everyTransfer = allTransfers(sim);
    const check = (match: Match) => {
      const hash = match.alert.transaction_hash as string;
      const transfersOfTx = everyTransfer.filter((t) => t.transaction_hash === hash);
      const got = enrichmentOf(match, "tx_nft_transfers");
      expect(got.total).toBe(transfersOfTx.length);
      expect(new Set((got.transfers as NftTransfer[]).map((t) => NORMALIZERS.nft_transfers(t).key))).toEqual(new Set(transfersOfTx.map((t) => NORMALIZERS.nft_transfers(t).key)));
    };
    for (const match of logMatches) {
      const own = match.alert.record as EventLog;
      const got = enrichmentOf(match, "tx_logs");
      const ofTx = allLogs.filter((l) => l.transaction_hash === own.transaction_hash);
      expect(got.total).toBe(ofTx.length);
      expect((got.logs as EventLog[]).map((l) => l.log_index).sort((a, b) => a - b)).toEqual(ofTx.map((l) => l.log_index).sort((a, b) => a - b).slice(0, 25));
      expect((got.logs as EventLog[]).some((l) => l.log_index === own.log_index)).toBe(true);
      check(match);
    }
    for (const match of transferMatches) check(match);
  });

  it("inventory: what the recipient holds of the collection and in all, after the transfer", async () => {
    const { sim, enricher } = await setup();
    const balances = holdings(sim);
    const transfers = sim.truth.nftTransfers(sim.addresses.busyCollection, range(sim)).filter((t) => t.to !== undefined && t.to.toLowerCase() !== ZERO).slice(-10);
    const burn = sim.truth.nftTransfers(sim.addresses.busyCollection, range(sim)).find((t) => t.to?.toLowerCase() === ZERO);
    const matches = transfers.map((t) => matchOf(t, "nft_transfers", ["inventory"]));
    if (burn) matches.push(matchOf(burn, "nft_transfers", ["inventory"]));
    await enricher.enrich(matches, new AbortController().signal);
    for (const match of matches.slice(0, transfers.length)) {
      const t = match.alert.record as NftTransfer;
      const holder = (t.to as string).toLowerCase();
      const contract = t.contract.contract_address.toLowerCase();
      const inv = enrichmentOf(match, "inventory") as { holder: string; collection: { contract: string; total: number; tokens: { token_id: string; token_count: number }[] }; account: { total: number; items: { nft: { contract_address: string }; token_id: string; token_count: number }[] } };
      expect(inv.holder).toBe(holder);
      const held = [...balances].filter(([k]) => k.startsWith(`${contract}|`) && k.endsWith(`|${holder}`));
      expect(inv.collection.contract).toBe(contract);
      expect(inv.collection.total).toBe(held.length);
      expect(inv.collection.tokens.map((x) => [x.token_id, BigInt(x.token_count)])).toEqual(
        held.map(([k, v]) => [k.split("|")[1], v]).sort((a, b) => Number(BigInt(a[0] as string) - BigInt(b[0] as string))).slice(0, 25),
      );
      // The account-wide list leaves out tokens without a URI (the API's default); whatever it lists, the chain agrees with.
      for (const item of inv.account.items) expect(balances.get(`${item.nft.contract_address.toLowerCase()}|${item.token_id}|${holder}`)).toBe(BigInt(item.token_count));
      expect(inv.account.total).toBeLessThanOrEqual([...balances.keys()].filter((k) => k.endsWith(`|${holder}`)).length);
      expect(inv.account.total).toBeGreaterThan(0);
    }
    if (burn) expect(enrichmentOf(matches.at(-1) as Match, "inventory")).toEqual({ holder: null, note: "burnt: the tokens went to no holder" });
  });

  it("caches per run: the same transaction or token enriched twice, by two rules and in two batches, costs one request", async () => {
    const { sim, enricher, common } = await setup();
    const t = sim.truth.nftTransfers(sim.addresses.busyCollection, range(sim)).at(-1) as NftTransfer;
    const first = [matchOf(t, "nft_transfers", ["nft", "tx_internal"], "a"), matchOf(t, "nft_transfers", ["nft", "tx_internal"], "b")];
    await enricher.enrich(first, new AbortController().signal);
    const second = [matchOf(t, "nft_transfers", ["tx_internal", "nft"], "c")];
    await enricher.enrich(second, new AbortController().signal);
    expect(requestsOf(sim, "transactionInternalTransactions")).toBe(1);
    expect(requestsOf(sim, "nftItem")).toBe(1);
    expect(enrichmentOf(second[0] as Match, "nft")).toEqual(enrichmentOf(first[0] as Match, "nft"));
    expect(await lookupCounts(common)).toEqual({ "nft/fetched": 1, "nft/cached": 2, "tx_internal/fetched": 1, "tx_internal/cached": 2 });
    expect(enricher.stats()).toEqual({ requests: 2, credits: 6 });
    expect(sim.stats().creditsTotal).toBe(6);
  });

  it("an NFT's holder is asked again once the state answer is a minute old; a transaction's call tree never", async () => {
    const { sim, enricher, clock } = await setup();
    const t = sim.truth.nftTransfers(sim.addresses.busyCollection, range(sim)).at(-1) as NftTransfer;
    await enricher.enrich([matchOf(t, "nft_transfers", ["nft", "tx_internal"])], new AbortController().signal);
    clock.ms += 61_000;
    await enricher.enrich([matchOf(t, "nft_transfers", ["nft", "tx_internal"])], new AbortController().signal);
    expect(requestsOf(sim, "nftItem")).toBe(2);
    expect(requestsOf(sim, "transactionInternalTransactions")).toBe(1);
  });

  it("keeps hostile on-chain text as data, cut to a bounded size", async () => {
    const { sim, enricher } = await setup({ hostile: true, seed: 9 });
    const transfers = sim.addresses.nftCollections.flatMap((c) => sim.truth.nftTransfers(c, range(sim)).slice(-8));
    const failed = [];
    for (let b = sim.head() - 100; b <= sim.head(); b++) failed.push(...sim.truth.blockInternalTransactions(b).filter((r) => r.transaction_status?.status === "Fail"));
    const matches = [...transfers.map((t) => matchOf(t, "nft_transfers", ["nft"])), ...failed.map((r) => matchOf(r, "internal_transactions", ["tx_internal"]))];
    await enricher.enrich(matches, new AbortController().signal);
    const strings: string[] = [];
    const walk = (v: unknown): void => {
      if (typeof v === "string") strings.push(v);
      else if (v && typeof v === "object") Object.values(v).forEach(walk);
    };
    for (const m of matches) walk(m.alert.enrichment);
    expect(strings.some((s) => s.includes("<!channel>") || s.includes("<script>"))).toBe(true);
    expect(Math.max(...strings.map((s) => s.length))).toBeLessThanOrEqual(500);
    for (const m of matches) expect(Object.values(m.alert.enrichment ?? {}).every((v) => !("error" in (v as object)))).toBe(true);
  });
});

describe("a failed enrichment never loses the alert", () => {
  it("explorer errors: every alert is marked with the error, and further lookups pause instead of retrying", async () => {
    const { sim, enricher, common, clock } = await setup({}, { concurrency: 2 });
    const transfers = sim.truth.nftTransfers(sim.addresses.busyCollection, range(sim)).slice(-20);
    sim.setFaults({ serverErrorRate: 1 });
    const matches = transfers.map((t) => matchOf(t, "nft_transfers", ["nft"]));
    await enricher.enrich(matches, new AbortController().signal);
    for (const m of matches) expect(enrichmentOf(m, "nft").error).toEqual(expect.any(String));
    const failed = matches.filter((m) => enrichmentOf(m, "nft").code === "KW_EXPLORER_HTTP");
    // Only the lookups already in flight (two) failed on their own; alerts of the same token share the answer.
    const failedTokens = new Set(failed.map((m) => (m.alert.record as NftTransfer).token_id));
    expect(failedTokens.size).toBeGreaterThanOrEqual(1);
    expect(failedTokens.size).toBeLessThanOrEqual(2);
    expect(matches.filter((m) => String(enrichmentOf(m, "nft").error).startsWith("not looked up: an earlier lookup failed")).length).toBe(matches.length - failed.length);
    // At most the two lookups in flight, each with its one retry, reached the explorer.
    expect(requestsOf(sim, "nftItem")).toBeLessThanOrEqual(4);
    const counts = await lookupCounts(common);
    expect((counts["nft/failed"] ?? 0) + (counts["nft/skipped"] ?? 0)).toBe(matches.length);

    // The explorer recovers: lookups resume once the pause is over, not before.
    sim.setFaults({ serverErrorRate: 0 });
    const again = [matchOf(transfers[0] as NftTransfer, "nft_transfers", ["nft"])];
    await enricher.enrich(again, new AbortController().signal);
    expect(enrichmentOf(again[0] as Match, "nft").error).toMatch(/^not looked up/);
    clock.ms += 61_000;
    await enricher.enrich(again, new AbortController().signal);
    expect(enrichmentOf(again[0] as Match, "nft").info).toBeDefined();
  });

  it("maintenance (503 with a long Retry-After): marked at once, no waiting", async () => {
    const { sim, enricher } = await setup();
    sim.setFaults({ maintenance: true });
    const logs = sim.truth.accountEventLogs(sim.addresses.busyToken, range(sim)).slice(-5);
    const matches = logs.map((l) => matchOf(l, "event_logs", ["tx_logs"]));
    await enricher.enrich(matches, new AbortController().signal);
    expect(enrichmentOf(matches[0] as Match, "tx_logs").error).toContain("MAINTENANCE");
    for (const m of matches) expect(enrichmentOf(m, "tx_logs").error).toEqual(expect.any(String));
  });

  it("a nearly spent daily budget: lookups stop while a tenth is left for polling; alerts are marked", async () => {
    const { sim, enricher, client } = await setup({}, {}, 100);
    const byTx = new Map(allTransfers(sim).map((t) => [t.transaction_hash, t]));
    const transfers = [...byTx.values()].slice(0, 40);
    expect(transfers).toHaveLength(40);
    const matches = transfers.map((t) => matchOf(t, "nft_transfers", ["tx_nft_transfers"]));
    await enricher.enrich(matches, new AbortController().signal);
    // 100 credits, 10 kept: 30 lookups of 3 credits each fit.
    expect(client.meter.spentToday()).toBe(90);
    expect(requestsOf(sim, "transactionNftTransfers")).toBe(30);
    const skipped = matches.filter((m) => String(enrichmentOf(m, "tx_nft_transfers").error ?? "").includes("daily credit budget is nearly spent"));
    expect(skipped.length).toBe(matches.length - matches.filter((m) => enrichmentOf(m, "tx_nft_transfers").total !== undefined).length);
    expect(skipped.length).toBeGreaterThan(0);
  });

  it("a lookup of an unknown transaction is marked with the API's answer", async () => {
    const { sim, enricher } = await setup();
    const r = sim.truth.blockInternalTransactions(sim.head()).at(0) as InternalTransactionListItem;
    const match = matchOf({ ...r, transaction_hash: `0x${"ab".repeat(32)}` }, "internal_transactions", ["tx_internal"]);
    await enricher.enrich([match], new AbortController().signal);
    expect(enrichmentOf(match, "tx_internal")).toMatchObject({ code: "KW_EXPLORER_HTTP", error: expect.stringContaining("NOT_FOUND_TRANSACTION") });
  });

  it("a cancelled tick: enrich rejects with the abort, so nothing is committed half-enriched", async () => {
    const { sim, enricher } = await setup({ faults: { latencyMs: 2000 } });
    const t = sim.truth.nftTransfers(sim.addresses.busyCollection, range(sim)).at(-1) as NftTransfer;
    const controller = new AbortController();
    const done = enricher.enrich([matchOf(t, "nft_transfers", ["nft"])], controller.signal);
    setTimeout(() => controller.abort(new Error("shutting down")), 50);
    await expect(done).rejects.toThrow("shutting down");
  });
});
