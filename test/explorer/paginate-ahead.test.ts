import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { paginatorOf } from "../../src/explorer/paginator.js";
import { observeFor } from "../helpers/wait-for.js";

/**
 * paginate asks for the page after the one it awaits (so that the explorer has it queued
 * while kaiawatch reads and works on this one), yet never for a page that does not exist nor,
 * when the caller stops after the first page (a window too dense to count is split), for
 * any page the caller will not read: every request is a credit.
 */
let sim: Simulator;
let client: ExplorerClient;

beforeEach(async () => {
  sim = await createSimulator({ seed: 21, initialBlocks: 60 });
  client = createExplorerClient(createTestCommon(), { baseUrl: sim.url, requestsPerSecond: 1000 });
});
afterEach(async () => {
  await client.close();
  await sim.close();
});

const requests = () => sim.stats().requests.nftTransfers?.["200"] ?? 0;

function pages(size: number) {
  const token = sim.addresses.busyCollection;
  const from = sim.head() - 59;
  const total = sim.truth.nftTransfers(token, { from, to: sim.head() }).length;
  const iterator = client.paginate("nftTransfers", { tokenAddress: token, blockNumberStart: from, blockNumberEnd: sim.head(), size });
  return { iterator, total, count: Math.ceil(total / size) };
}

describe("paginate reading ahead", () => {
  it("asks for each page once and for none past the last", async () => {
    const { iterator, total, count } = pages(7);
    expect(count).toBeGreaterThan(3);
    let seen = 0;
    for await (const page of iterator) seen += page.results.length;
    expect(seen).toBe(total);
    expect(requests()).toBe(count);
  });

  it("from the second page on, asks for the page after the one awaited beside it, and for none past the count", async () => {
    // A call answered by the test: what was asked, and when, is the test's to see.
    const asked: number[] = [];
    const answers = new Map<number, () => void>();
    const TOTAL_PAGES = 4;
    const call = ((_operation: string, params: { page: number; size: number }) => {
      asked.push(params.page);
      return new Promise((resolve) => {
        const results = Array.from({ length: params.size }, () => ({}));
        answers.set(params.page, () => resolve({ results, paging: { total_count: TOTAL_PAGES * params.size, current_page: params.page, total_page: TOTAL_PAGES, last: params.page === TOTAL_PAGES } }));
      });
    }) as never;
    const iterator = paginatorOf(call)("nftTransfers", { tokenAddress: sim.addresses.busyCollection, size: 2 })[Symbol.asyncIterator]();
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const step = async (page: number, askedBefore: number[], askedAfter: number[]) => {
      const next = iterator.next();
      await settle();
      expect(asked, `while page ${page} is awaited`).toEqual(askedBefore);
      answers.get(page)!();
      expect((await next).done).toBe(false);
      await settle();
      expect(asked, `once page ${page} is read`).toEqual(askedAfter);
    };
    await step(1, [1], [1]); // the caller may stop after the first page: nothing asked ahead
    await step(2, [1, 2, 3], [1, 2, 3]); // page 3 beside page 2, before page 2's answer
    await step(3, [1, 2, 3, 4], [1, 2, 3, 4]);
    await step(4, [1, 2, 3, 4], [1, 2, 3, 4]); // none past the count
    expect((await iterator.next()).done).toBe(true);
  });

  it("asks for nothing more when the caller stops after the first page", async () => {
    const { iterator } = pages(7);
    for await (const page of iterator) {
      expect(page.results).toHaveLength(7);
      break;
    }
    await observeFor(200);
    expect(requests()).toBe(1);
  });
});
