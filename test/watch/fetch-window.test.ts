import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { InternalTransactionListItem, ListResponse } from "../../src/explorer/types.js";
import { fetchWindow, type Paginate, type WindowChunk } from "../../src/watch/fetch-window.js";
import type { NftTransfer } from "../../src/explorer/types.js";
import { PROBES, compareRecords, normalizeInternalTransaction, normalizeNftTransfer, numberTwins, prepareWindow } from "../../src/watch/normalize.js";
import type { CountMismatch } from "../../src/watch/fetch-window.js";
import type { WatchedRecord } from "../../src/model/record.js";

/**
 * The window planner's properties, over an in-memory model of the API's paging contract
 * (newest first, total_count capped, pages that may repeat records): whatever the density,
 * the chunks cover the window contiguously and hold every record of it exactly once, in
 * ascending order. The same code runs against the simulator in the engine's tests.
 */
function record(block: number, txIndex: number, callId: number): InternalTransactionListItem {
  return { block_id: block, transaction_index: txIndex, call_id: callId, transaction_hash: `0x${block.toString(16).padStart(8, "0")}${txIndex.toString(16).padStart(56, "0")}`, type: "CALL", from: "0x" + "1".repeat(40), amount: "1" };
}

/**
 * `repeatEvery`: page drift on the first paging of each range (a record of the previous page
 * shows up again, as when the explorer indexes a block while we page), so that the pages
 * hold more records than `total_count` says; the range's next paging is clean.
 * `shortPagings`: the first N pagings lose the last record of their first page (a block the
 * explorer counted but had not finished indexing).
 */
function modelApi(records: InternalTransactionListItem[], options: { cap: number; pageSize: number; repeatEvery?: number; shortPagings?: number }): { paginate: Paginate; requests: () => number; pagings: () => number } {
  let requests = 0;
  let pagings = 0;
  const drifted = new Set<string>();
  const paginate: Paginate = (range) => {
    pagings += 1;
    const short = pagings <= (options.shortPagings ?? 0);
    const drift = !drifted.has(`${range.from}-${range.to}`);
    drifted.add(`${range.from}-${range.to}`);
    const matching = records
      .filter((r) => r.block_id >= range.from && r.block_id <= range.to)
      .sort((a, b) => b.block_id - a.block_id || b.transaction_index - a.transaction_index || a.call_id - b.call_id);
    const total = Math.min(matching.length, options.cap);
    const pages = Math.max(1, Math.ceil(total / options.pageSize));
    return (async function* () {
      for (let page = 1; page <= pages; page++) {
        requests += 1;
        let results = matching.slice((page - 1) * options.pageSize, page * options.pageSize);
        // Page drift: a record of the previous page shows up again.
        if (drift && options.repeatEvery && page > 1 && page % options.repeatEvery === 0) results = [matching[(page - 1) * options.pageSize - 1]!, ...results];
        if (short && page === 1) results = results.slice(0, -1);
        const response: ListResponse<unknown> = { results, paging: { total_count: total, current_page: page, last: page === pages, total_page: pages } };
        yield response;
      }
    })();
  };
  return { paginate, requests: () => requests, pagings: () => pagings };
}

const NO_WAIT = { baseMs: 0, maxMs: 0 };

async function collect(from: number, to: number, paginate: Paginate, pageSize: number, countCap?: number): Promise<WindowChunk[]> {
  const chunks: WindowChunk[] = [];
  for await (const chunk of fetchWindow(from, to, { paginate, normalize: normalizeInternalTransaction as (data: never) => WatchedRecord, pageSize, countCap, perBlock: false, recount: NO_WAIT, signal: new AbortController().signal })) chunks.push(chunk);
  return chunks;
}

describe("fetchWindow", () => {
  it("covers the window contiguously with every record exactly once, ascending, whatever the density", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ block: fc.integer({ min: 1, max: 60 }), tx: fc.integer({ min: 0, max: 5 }), call: fc.integer({ min: 0, max: 3 }) }), { maxLength: 400 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 2, max: 50 }),
        fc.integer({ min: 1, max: 7 }),
        async (raw, from, span, cap, pageSize) => {
          const to = Math.min(60, from + span);
          const unique = new Map(raw.map((r) => [`${r.block}:${r.tx}:${r.call}`, record(r.block, r.tx, r.call)]));
          // Blocks denser than the cap cannot be split: keep the model within what the API can count per block.
          const perBlock = new Map<number, number>();
          const records = [...unique.values()].filter((r) => {
            const n = (perBlock.get(r.block_id) ?? 0) + 1;
            perBlock.set(r.block_id, n);
            return n < cap;
          });
          const api = modelApi(records, { cap, pageSize: Math.min(pageSize, cap), repeatEvery: 2 });
          const chunks = await collect(from, to, api.paginate, Math.min(pageSize, cap), cap);

          expect(chunks[0]?.from).toBe(from);
          expect(chunks.at(-1)?.to).toBe(to);
          for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.from).toBe(chunks[i - 1]!.to + 1);
          const seen = chunks.flatMap((c) => c.records.map((r) => r.key));
          const expected = prepareWindow(records.map((raw) => normalizeInternalTransaction(raw)), from, to).records.map((r) => r.key);
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("splits a window that holds 40,000 records or more instead of paging past the count", async () => {
    const records: InternalTransactionListItem[] = [];
    for (let block = 1; block <= 100; block++) for (let i = 0; i < 500; i++) records.push(record(block, i, 0));
    const api = modelApi(records, { cap: 40_000, pageSize: 2000 });
    const chunks = await collect(1, 100, api.paginate, 2000);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.reduce((n, c) => n + c.records.length, 0)).toBe(50_000);
    expect(chunks.every((c) => c.records.length < 40_000)).toBe(true);
  });

  it("keeps only the selected records, each once and in order, while counting every record of the window", async () => {
    // A wide window over several pages that repeat records (page drift) and stray outside the bounds.
    // Selection reads identity-free probes; the kept records must come out whole, with their keys.
    const records: InternalTransactionListItem[] = [];
    for (let block = 1; block <= 40; block++) for (let i = 0; i < 25; i++) records.push(record(block, i, i % 3));
    const api = modelApi(records, { cap: 40_000, pageSize: 60, repeatEvery: 3 });
    const wanted = (r: WatchedRecord) => (r.data as InternalTransactionListItem).transaction_index % 7 === 0;
    const chunks: WindowChunk[] = [];
    for await (const chunk of fetchWindow(5, 30, { paginate: api.paginate, normalize: normalizeInternalTransaction as (data: never) => WatchedRecord, probe: PROBES.internal_transactions as (data: never) => WatchedRecord, pageSize: 60, perBlock: false, select: wanted, recount: NO_WAIT, signal: new AbortController().signal })) chunks.push(chunk);

    const all = prepareWindow(records.map((raw) => normalizeInternalTransaction(raw)), 5, 30).records;
    expect(chunks.flatMap((c) => c.records.map((r) => r.key))).toEqual(all.filter(wanted).map((r) => r.key));
    // Every record inside the window was seen, not only the selected ones; the drifting first
    // paging held more records than total_count and was fetched again.
    const pages = Math.ceil(all.length / 60);
    expect(api.pagings()).toBe(2);
    expect(chunks.reduce((n, c) => n + c.pages, 0)).toBe(pages);
    expect(chunks.reduce((n, c) => n + c.scanned, 0)).toBe(all.length);
  });

  it("reports a single block the API cannot count instead of skipping it", async () => {
    const records = Array.from({ length: 30 }, (_, i) => record(5, i, 0));
    const api = modelApi(records, { cap: 20, pageSize: 10 });
    await expect(collect(5, 5, api.paginate, 10, 20)).rejects.toMatchObject({ code: "KW_WATCH_BLOCK_TOO_DENSE" });
  });
});

describe("fetchWindow against total_count", () => {
  const records: InternalTransactionListItem[] = [];
  for (let block = 1; block <= 10; block++) for (let i = 0; i < 4; i++) records.push(record(block, i, 0));

  it("fetches a range again while its pages hold fewer records than the API counted, then yields it whole", async () => {
    const api = modelApi(records, { cap: 40_000, pageSize: 15, shortPagings: 2 });
    const told: CountMismatch[] = [];
    const chunks: WindowChunk[] = [];
    const options = { paginate: api.paginate, normalize: normalizeInternalTransaction as (data: never) => WatchedRecord, pageSize: 15, perBlock: false, recount: { retries: 3, baseMs: 0, maxMs: 0 }, onRecount: (m: CountMismatch) => told.push(m), signal: new AbortController().signal };
    for await (const chunk of fetchWindow(1, 10, options)) chunks.push(chunk);
    expect(api.pagings()).toBe(3);
    expect(told.map((m) => [m.attempt, m.received, m.reported[0]])).toEqual([[1, 39, 40], [2, 39, 40]]);
    expect(chunks.flatMap((c) => c.records.map((r) => r.key))).toEqual(prepareWindow(records.map((raw) => normalizeInternalTransaction(raw)), 1, 10).records.map((r) => r.key));
  });

  it("fails with KW_WATCH_COUNT_MISMATCH, yielding nothing of the range, when the count never agrees", async () => {
    const api = modelApi(records, { cap: 40_000, pageSize: 15, shortPagings: Number.POSITIVE_INFINITY });
    const chunks: WindowChunk[] = [];
    const run = async () => {
      for await (const chunk of fetchWindow(1, 10, { paginate: api.paginate, normalize: normalizeInternalTransaction as (data: never) => WatchedRecord, pageSize: 15, perBlock: false, recount: { retries: 2, baseMs: 0, maxMs: 0 }, signal: new AbortController().signal })) chunks.push(chunk);
    };
    await expect(run()).rejects.toMatchObject({ code: "KW_WATCH_COUNT_MISMATCH", mismatch: { from: 1, to: 10, received: 39, attempt: 3 } });
    expect(api.pagings()).toBe(3);
    expect(chunks).toEqual([]);
  });

  it("waits between fetches as the policy says, and a stop ends the wait", async () => {
    const api = modelApi(records, { cap: 40_000, pageSize: 15, shortPagings: Number.POSITIVE_INFINITY });
    const controller = new AbortController();
    const run = async () => {
      for await (const _ of fetchWindow(1, 10, { paginate: api.paginate, normalize: normalizeInternalTransaction as (data: never) => WatchedRecord, pageSize: 15, perBlock: false, recount: { retries: 3, baseMs: 60_000, maxMs: 60_000 }, onRecount: () => controller.abort(new Error("stopping")), signal: controller.signal })) void _;
    };
    await expect(run()).rejects.toThrow("stopping");
    expect(api.pagings()).toBe(1);
  });
});

describe("identical NFT transfers", () => {
  const transfer = (overrides: Partial<NftTransfer> = {}): NftTransfer => ({
    contract: { contract_address: "0x" + "c".repeat(40), contract_type: "KIP37" },
    block_id: 7,
    transaction_hash: "0x" + "a".repeat(64),
    transaction_index: 2,
    datetime: "2026-01-01T00:00:00.000Z",
    from: "0x" + "1".repeat(40),
    to: "0x" + "2".repeat(40),
    token_id: "5",
    token_count: "3",
    ...overrides,
  });

  it("are numbered, the first keeping the key it always had, and in any order of arrival", () => {
    const twin = transfer();
    const other = transfer({ token_id: "6" });
    const base = normalizeNftTransfer(twin).key;
    for (const arrival of [[twin, other, twin, twin], [twin, twin, twin, other], [other, twin, twin, twin]]) {
      const prepared = prepareWindow(arrival.map((t) => normalizeNftTransfer({ ...t })), 1, 10);
      expect(prepared.records.map((r) => r.key).sort()).toEqual([base, `${base}#2`, `${base}#3`, normalizeNftTransfer(other).key].sort());
      expect(prepared.duplicates).toBe(0);
    }
    // The key as before this change: block:tx:contract:token_id:from:to:token_count.
    expect(base).toBe(`7:${"0x" + "a".repeat(64)}:${"0x" + "c".repeat(40)}:5:${"0x" + "1".repeat(40)}:${"0x" + "2".repeat(40)}:3`);
  });

  it("are numbered per transaction: the same transfer in two transactions is two first occurrences", () => {
    const a = transfer();
    const b = transfer({ transaction_hash: "0x" + "b".repeat(64), transaction_index: 3 });
    const keys = prepareWindow([a, b, a].map((raw) => normalizeNftTransfer(raw)), 1, 10).records.map((r) => r.key);
    expect(keys.filter((k) => k.includes("#"))).toHaveLength(1);
    expect(keys).toContain(normalizeNftTransfer(b).key);
  });

  it("are numbered alike for `kaiawatch explain` (one transaction's records) and for a window", () => {
    const twin = transfer();
    const records = [twin, transfer({ token_id: "6" }), twin].map((raw) => normalizeNftTransfer(raw));
    const window = prepareWindow(records, 1, 10).records.map((r) => r.key);
    const explained = numberTwins([...records].sort(compareRecords)).map((r) => r.key);
    expect(explained).toEqual(window);
  });

  it("leave repeated event logs and internal transactions deduplicated (those cannot be twins)", () => {
    const prepared = prepareWindow([record(3, 1, 0), record(3, 1, 0)].map((raw) => normalizeInternalTransaction(raw)), 1, 10);
    expect(prepared.records).toHaveLength(1);
    expect(prepared.duplicates).toBe(1);
  });
});

describe("prepareWindow", () => {
  it("drops records outside the window and repeated identities, and sorts ascending", () => {
    const inside = [record(12, 1, 0), record(10, 0, 1), record(10, 0, 0), record(12, 0, 0)];
    const prepared = prepareWindow([...inside, record(9, 0, 0), record(13, 0, 0), record(10, 0, 0)].map((raw) => normalizeInternalTransaction(raw)), 10, 12);
    expect(prepared.records.map((r) => r.key.split(":").slice(0, 1).concat(r.key.split(":").slice(2)).join(":"))).toEqual(["10:0", "10:1", "12:0", "12:0"]);
    expect(prepared.records.map((r) => r.order)).toEqual([[0, 0], [0, 1], [0, 0], [1, 0]]);
    expect(prepared.outside).toBe(2);
    expect(prepared.duplicates).toBe(1);
  });
});
