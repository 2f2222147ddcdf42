import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { OPERATIONS } from "../../src/explorer/operations.js";
import { startFixtureServer, type FixtureServer } from "./fixture-server.js";
import * as s from "./samples.js";

let server: FixtureServer;
let client: ExplorerClient;

beforeAll(async () => {
  server = await startFixtureServer();
  client = createExplorerClient(createTestCommon(), { baseUrl: server.url, apiKey: "test-key-123456", requestsPerSecond: 1000, retryBaseMs: 1 });
});
afterAll(async () => {
  await client.close();
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

/**
 * Each case: a call and an answer that sets every documented field, some of which the
 * simulator never sends (icons, image_data, animation and YouTube URLs, background colours,
 * a `property` map). Paths, queries and the round trip of real chain data are tested against
 * the simulator (simulator-operations.test.ts).
 */
const cases = [
  {
    name: "transactionInternalTransactions",
    call: () => client.transactionInternalTransactions({ transactionHash: s.TX, page: 2, size: 50 }),
    body: s.list(s.internalTransactionOfTransaction),
  },
  {
    name: "nftItem",
    call: () => client.nftItem({ tokenAddress: s.TOKEN, tokenId: "42" }),
    body: s.nftItem,
  },
  {
    name: "accountNftTransfers",
    call: () => client.accountNftTransfers({ accountAddress: s.ADDR_A, contractAddress: s.TOKEN, blockNumberStart: 100, blockNumberEnd: 1099, page: 1, size: 2000 }),
    body: s.list(s.nftTransfer),
  },
  {
    name: "nftTransfers",
    call: () => client.nftTransfers({ tokenAddress: s.TOKEN, tokenId: 123456789012345678901234567890n, blockNumberStart: 5, blockNumberEnd: 5 }),
    body: s.list(s.nftTransfer),
  },
  {
    name: "transactionNftTransfers",
    call: () => client.transactionNftTransfers({ transactionHash: s.TX, size: 1 }),
    body: s.list(s.nftTransfer),
  },
  {
    name: "nftInventoryDetails",
    call: () => client.nftInventoryDetails({ tokenAddress: s.TOKEN, keyword: s.ADDR_A }),
    body: s.list(s.nftInventoryDetail),
  },
  {
    name: "accountInternalTransactions",
    call: () => client.accountInternalTransactions({ accountAddress: s.ADDR_A, blockNumberStart: 0, blockNumberEnd: 999 }),
    body: s.list(s.internalTransactionListItem),
  },
  {
    name: "blockInternalTransactions",
    call: () => client.blockInternalTransactions({ blockNumber: 150_000_123, page: 3 }),
    body: s.list(s.internalTransactionListItem),
  },
  {
    name: "accountNftInventories",
    call: () => client.accountNftInventories({ accountAddress: s.ADDR_A, excludeIfTokenUriIsEmpty: false }),
    body: s.list(s.accountNftInventory),
  },
  {
    name: "transactionEventLogs",
    call: () => client.transactionEventLogs({ transactionHash: s.TX, signature: s.TOPIC }),
    body: s.list(s.eventLog),
  },
  {
    name: "accountEventLogs",
    call: () => client.accountEventLogs({ accountAddress: s.TOKEN, signature: s.TOPIC, blockNumberStart: 10, blockNumberEnd: 20, page: 1, size: 100 }),
    body: s.list(s.eventLog),
  },
] as const;

describe("every operation", () => {
  it("has a case here", () => {
    expect(cases.map((c) => c.name).sort()).toEqual(Object.keys(OPERATIONS).sort());
  });

  for (const c of cases) {
    it(`${c.name}: returns every documented field`, async () => {
      server.enqueue({ body: c.body });
      const result = await c.call();
      expect(result).toEqual(c.body);
      expect(server.requests).toHaveLength(1);
    });
  }

  it("sends the bearer token, Accept and User-Agent headers", async () => {
    server.enqueue({ body: s.nftItem });
    await client.nftItem({ tokenAddress: s.TOKEN, tokenId: "1" });
    const { headers } = server.requests[0]!;
    expect(headers.authorization).toBe("Bearer test-key-123456");
    expect(headers.accept).toBe("application/json");
    const { version } = (await import("../../package.json", { with: { type: "json" } })).default;
    expect(headers["user-agent"]).toBe(`kaiawatch/${version}`);
  });

  it("sends no Authorization header without a key, and keeps a base URL path prefix", async () => {
    const bare = createExplorerClient(createTestCommon(), { baseUrl: `${server.url}/proxy/`, requestsPerSecond: 1000 });
    try {
      server.enqueue({ body: s.list(s.eventLog) });
      await bare.transactionEventLogs({ transactionHash: s.TX });
      expect(server.requests[0]!.headers.authorization).toBeUndefined();
      expect(server.requests[0]!.path).toBe(`/proxy/api/v1/transactions/${s.TX}/event-logs`);
    } finally {
      await bare.close();
    }
  });

  it("passes an account inventory on as received, whichever side of `nft` its fields stand (nothing reads them)", async () => {
    const { token_id, token_uri, token_count, nft } = s.accountNftInventory;
    const { nft_type, ...info } = nft as typeof nft & { nft_type: string };
    server.enqueue({ body: s.list({ nft: { ...nft, token_id, token_uri, token_count } }) });
    expect((await client.accountNftInventories({ accountAddress: s.ADDR_A })).results[0]).toEqual({ nft: { ...nft, token_id, token_uri, token_count } });
    server.enqueue({ body: s.list({ nft: info, nft_type, token_id, token_uri, token_count }) });
    expect((await client.accountNftInventories({ accountAddress: s.ADDR_A })).results[0]).toEqual({ nft: info, nft_type, token_id, token_uri, token_count });
  });

  it("treats null optional fields as omitted and keeps unknown fields", async () => {
    server.enqueue({ body: s.list({ ...s.internalTransactionListItem, to: null, error: null, transaction_status: null, extra_field: "kept" }) });
    const page = await client.accountInternalTransactions({ accountAddress: s.ADDR_A });
    const record = page.results[0]!;
    expect("to" in record).toBe(false);
    expect("error" in record).toBe(false);
    expect("transaction_status" in record).toBe(false);
    expect((record as unknown as Record<string, unknown>).extra_field).toBe("kept");
    expect(record.amount).toBe(s.internalTransactionListItem.amount);
  });

  it("accepts a minimal record with only the required fields", async () => {
    const minimal = { log_index: 0, contract_address: s.TOKEN, topics: [], data: "0x", items: [], block_number: 1 };
    server.enqueue({ body: { results: [minimal], paging: s.paging() } });
    const page = await client.accountEventLogs({ accountAddress: s.TOKEN });
    expect(page.results).toEqual([minimal]);
    expect(page.property).toBeUndefined();
  });
});
