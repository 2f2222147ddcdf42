import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { waitFor } from "../helpers/child.js";

/**
 * paginate asks for the next page while its caller works on the current one (so that the
 * explorer and kaiawatch work side by side), yet never for a page that does not exist nor,
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

  it("has the next page on its way while the caller holds the second", async () => {
    const { iterator } = pages(7);
    const it = iterator[Symbol.asyncIterator]();
    await it.next();
    await it.next();
    await waitFor(() => requests() === 3, 5_000, "the third page requested before the caller asks for it");
    await it.return(undefined);
  });

  it("asks for nothing more when the caller stops after the first page", async () => {
    const { iterator } = pages(7);
    for await (const page of iterator) {
      expect(page.results).toHaveLength(7);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(requests()).toBe(1);
  });
});
