import { describe, expect, it } from "vitest";
import type { InternalTransactionListItem, ListResponse } from "../../src/explorer/types.js";
import { blocksInFlightFor, fetchWindow, MAX_BLOCKS_IN_FLIGHT, type Paginate, type WindowChunk } from "../../src/watch/fetch-window.js";
import { normalizeInternalTransaction } from "../../src/watch/normalize.js";
import type { WatchedRecord } from "../../src/model/record.js";

/**
 * Operation 8 (one request per block): several blocks asked for at once, their chunks in
 * block order. The answers here come when the test says, in any order, so that what is in
 * flight is counted, not timed.
 */
function call(block: number): InternalTransactionListItem {
  return { block_id: block, transaction_index: 0, call_id: 0, transaction_hash: `0x${block.toString(16).padStart(64, "0")}`, type: "CALL", from: "0x" + "1".repeat(40), amount: "1" };
}

interface Asked {
  block: number;
  signal: AbortSignal;
  answer: (fail?: Error) => void;
}

/** A paginate whose answers wait until answered by the test. */
function heldApi(): { paginate: Paginate; asked: Asked[]; inFlight: () => number; most: () => number } {
  const asked: Asked[] = [];
  let inFlight = 0;
  let most = 0;
  const paginate: Paginate = (range, signal) =>
    (async function* () {
      inFlight += 1;
      most = Math.max(most, inFlight);
      try {
        const failure = await new Promise<Error | undefined>((resolve, reject) => {
          asked.push({ block: range.from, signal, answer: resolve });
          signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
        });
        if (failure) throw failure;
      } finally {
        inFlight -= 1;
      }
      const response: ListResponse<unknown> = { results: [call(range.from)], paging: { total_count: 1, current_page: 1, last: true, total_page: 1 } };
      yield response;
    })();
  return { paginate, asked, inFlight: () => inFlight, most: () => most };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

function window(from: number, to: number, paginate: Paginate, blocksInFlight: number, signal = new AbortController().signal): AsyncGenerator<WindowChunk> {
  return fetchWindow(from, to, { paginate, normalize: normalizeInternalTransaction as (data: never) => WatchedRecord, pageSize: 100, perBlock: true, blocksInFlight, signal });
}

describe("operation 8: blocks in flight", () => {
  it("asks for up to blocksInFlight blocks at once and yields them in block order, whatever order they are answered in", async () => {
    const api = heldApi();
    const chunks: WindowChunk[] = [];
    const reading = (async () => {
      for await (const chunk of window(1, 10, api.paginate, 4)) chunks.push(chunk);
    })();
    await turn();
    expect(api.asked.map((a) => a.block)).toEqual([1, 2, 3, 4]);
    // Answered newest first: nothing comes out until block 1 is in.
    for (const block of [4, 3, 2]) api.asked.find((a) => a.block === block)!.answer();
    await turn();
    expect(chunks).toHaveLength(0);
    api.asked.find((a) => a.block === 1)!.answer();
    await turn();
    expect(chunks.map((c) => c.from)).toEqual([1, 2, 3, 4]);
    // The freed places went to the next blocks at once.
    expect(api.asked.map((a) => a.block)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (let block = 5; block <= 10; block++) {
      while (!api.asked.some((a) => a.block === block)) await turn();
      api.asked.find((a) => a.block === block)!.answer();
    }
    await reading;
    expect(chunks.map((c) => [c.from, c.to])).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1, i + 1]));
    expect(chunks.map((c) => c.records[0]?.block)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(api.most()).toBe(4);
  });

  it("one at a time by default", async () => {
    const api = heldApi();
    const reading = (async () => {
      for await (const _ of fetchWindow(1, 3, { paginate: api.paginate, normalize: normalizeInternalTransaction as (data: never) => WatchedRecord, pageSize: 100, perBlock: true, signal: new AbortController().signal })) void _;
    })();
    for (let block = 1; block <= 3; block++) {
      while (!api.asked.some((a) => a.block === block)) await turn();
      api.asked.find((a) => a.block === block)!.answer();
    }
    await reading;
    expect(api.most()).toBe(1);
  });

  it("a failed block ends the window after the blocks before it, and cancels the requests after it", async () => {
    const api = heldApi();
    const chunks: WindowChunk[] = [];
    const reading = (async () => {
      for await (const chunk of window(1, 10, api.paginate, 4)) chunks.push(chunk);
    })();
    await turn();
    api.asked[0]!.answer(); // block 1
    // Block 3 fails first, but the window reports in block order: block 2's failure.
    api.asked[2]!.answer(new Error("block 3 failed"));
    api.asked[1]!.answer(new Error("block 2 failed"));
    await expect(reading).rejects.toThrow("block 2 failed");
    expect(chunks.map((c) => c.from)).toEqual([1]);
    // Blocks 4 and 5 (5 asked once block 1 was in) were still waiting: their requests were aborted.
    const waiting = api.asked.filter((a) => a.block >= 4);
    expect(waiting.length).toBeGreaterThan(0);
    for (const a of waiting) expect(a.signal.aborted).toBe(true);
    expect(api.inFlight()).toBe(0);
  });

  it("a caller that stops reading cancels the blocks still asked for", async () => {
    const api = heldApi();
    const blocks = window(1, 10, api.paginate, 3);
    const first = blocks.next();
    await turn();
    api.asked[0]!.answer();
    expect((await first).value?.from).toBe(1);
    await blocks.return(undefined);
    for (const a of api.asked.slice(1)) expect(a.signal.aborted).toBe(true);
  });

  it("the caller's abort reaches every block in flight", async () => {
    const api = heldApi();
    const controller = new AbortController();
    const reading = (async () => {
      for await (const _ of window(1, 10, api.paginate, 3, controller.signal)) void _;
    })();
    await turn();
    controller.abort(new Error("stopping"));
    await expect(reading).rejects.toThrow("stopping");
    expect(api.asked.every((a) => a.signal.aborted)).toBe(true);
  });

  it("a second's worth of requests at the rate limit, at least one and at most MAX_BLOCKS_IN_FLIGHT", () => {
    expect(blocksInFlightFor(5)).toBe(5);
    expect(blocksInFlightFor(50)).toBe(50);
    expect(blocksInFlightFor(0.5)).toBe(1);
    expect(blocksInFlightFor(10_000)).toBe(MAX_BLOCKS_IN_FLIGHT);
  });
});
