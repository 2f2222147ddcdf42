import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { createExplorerClient, type ExplorerClient, type ExplorerClientOptions } from "../../src/explorer/client.js";
import { ExplorerBadResponseError, ExplorerResponseTooLargeError, ExplorerTimeoutError } from "../../src/explorer/errors.js";
import { startFixtureServer, type FixtureServer } from "./fixture-server.js";
import * as s from "./samples.js";

let server: FixtureServer;
let client: ExplorerClient;
const common = createTestCommon({ secrets: createSecretRedactor() });

function makeClient(options: Partial<ExplorerClientOptions> = {}): ExplorerClient {
  client = createExplorerClient(common, { baseUrl: server.url, apiKey: "secret-api-key-xyz", requestsPerSecond: 1000, retryBaseMs: 1, retryMaxMs: 5, ...options });
  return client;
}

beforeEach(async () => {
  server = await startFixtureServer();
});
afterEach(async () => {
  await client?.close();
  await server.close();
});

const list = (amount: string) => `{"results":[${JSON.stringify({ ...s.internalTransactionListItem, amount: "@" }).replace('"@"', amount)}],"paging":{"total_count":1,"current_page":1,"last":true,"total_page":1}}`;

describe("exact amounts", () => {
  // Wire forms the simulator never sends (it sends plain decimal strings, tested in
  // simulator-operations.test.ts): numbers, exponents, the edges of the exact-number rewriter.
  const cases = [
    ["123456789012345678901.123456789012345678", "123456789012345678901.123456789012345678"],
    ["9007199254740993", "9007199254740993"],
    ["0.000000000000000001", "0.000000000000000001"],
    ["1e21", "1000000000000000000000"],
    ['"1.5E+2"', "150"],
    ["1.5", "1.5"],
  ] as const;
  for (const [wire, expected] of cases) {
    it(`amount ${wire} comes out as "${expected}"`, async () => {
      makeClient();
      server.enqueue({ body: list(wire) });
      const page = await client.blockInternalTransactions({ blockNumber: 1 });
      expect(page.results[0]!.amount).toBe(expected);
    });
  }

  it("token_count, token_id, total_supply and burn_amount as numbers come out exact", async () => {
    makeClient();
    const item = JSON.stringify({ ...s.nftItem, total_supply: "@1", burn_amount: "@2", token_id: "@3", info: { ...s.nftItem.info, total_supply: "@4" } })
      .replace('"@1"', "340282366920938463463374607431768211456")
      .replace('"@2"', "18446744073709551617")
      .replace('"@3"', "115792089237316195423570985008687907853269984665640564039457584007913129639935")
      .replace('"@4"', "1e30");
    server.enqueue({ body: item });
    const result = await client.nftItem({ tokenAddress: s.TOKEN, tokenId: "1" });
    expect(result.total_supply).toBe("340282366920938463463374607431768211456");
    expect(result.burn_amount).toBe("18446744073709551617");
    expect(result.token_id).toBe("115792089237316195423570985008687907853269984665640564039457584007913129639935");
    expect((result.info as { total_supply: string }).total_supply).toBe(`1${"0".repeat(30)}`);

    const transfer = JSON.stringify(s.list({ ...s.nftTransfer, token_count: "@" })).replace('"@"', "99999999999999999999999");
    server.enqueue({ body: transfer });
    const page = await client.nftTransfers({ tokenAddress: s.TOKEN });
    expect(page.results[0]!.token_count).toBe("99999999999999999999999");
  });

  it("changes a record only as docs/alert-document.md says: numbers to text, nulls removed, the rest as received", async () => {
    makeClient();
    const wire = JSON.stringify(s.list({ ...s.nftTransfer, token_count: "@", token_id: "0x1f", to: null, fee_payer: null, surprise: { nested: [1, "x"] } })).replace('"@"', "3");
    server.enqueue({ body: wire });
    const record = (await client.nftTransfers({ tokenAddress: s.TOKEN })).results[0] as unknown as Record<string, unknown>;
    expect(record.token_count).toBe("3");
    expect(record.token_id).toBe("0x1f");
    expect("to" in record || "fee_payer" in record).toBe(false);
    expect(record.surprise).toEqual({ nested: [1, "x"] });
    expect(record.from).toBe(s.nftTransfer.from);

    server.enqueue({ body: list('"1.50"') });
    expect((await client.blockInternalTransactions({ blockNumber: 1 })).results[0]!.amount).toBe("1.50");
  });

  it("an amount that is not a number is a bad response", async () => {
    makeClient();
    server.enqueue({ body: list('"1,5 KAIA"') });
    const error = await client.blockInternalTransactions({ blockNumber: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExplorerBadResponseError);
    expect((error as ExplorerBadResponseError).message).toMatch(/results\[0\]\.amount/);
  });
});

describe("bad responses", () => {
  const bodies: [string, string, RegExp, string][] = [
    ["truncated JSON", '{"results":[{"log_index":1,"contract_addr', /not valid JSON/, "KW_EXPLORER_BAD_RESPONSE"],
    ["an empty body", "", /empty body/, "KW_EXPLORER_BAD_RESPONSE"],
    ["a missing paging", '{"results":[]}', /paging: required field is missing/, "KW_EXPLORER_SHAPE_CHANGED"],
    ["a string where a number belongs", JSON.stringify(s.list({ ...s.eventLog, block_number: "12" })), /results\[0\]\.block_number: expected an integer.*changed shape at results\[\]\.block_number; value "12"/, "KW_EXPLORER_SHAPE_CHANGED"],
    ["results not an array", '{"results":{},"paging":{"total_count":0,"current_page":1,"last":true,"total_page":1}}', /results: expected an array/, "KW_EXPLORER_SHAPE_CHANGED"],
    ["a required field null", JSON.stringify(s.list({ ...s.eventLog, topics: null })), /results\[0\]\.topics: required field is null/, "KW_EXPLORER_SHAPE_CHANGED"],
    ["a nested bad item", JSON.stringify(s.list({ ...s.eventLog, items: [{ name: "a", value: "b" }, { name: 1, value: "c" }] })), /results\[0\]\.items\[1\]\.name/, "KW_EXPLORER_SHAPE_CHANGED"],
    ["an address that is not one", JSON.stringify(s.list({ ...s.eventLog, contract_address: "0x12" })), /results\[0\]\.contract_address: expected an address/, "KW_EXPLORER_SHAPE_CHANGED"],
    ["a topic that is not a hash", JSON.stringify(s.list({ ...s.eventLog, topics: ["Transfer"] })), /results\[0\]\.topics\[0\]: expected a 32-byte hash/, "KW_EXPLORER_SHAPE_CHANGED"],
  ];
  for (const [name, body, problem, code] of bodies) {
    it(`${name} becomes ${code} naming the operation with an excerpt`, async () => {
      makeClient({ maxRetries: 0 });
      server.enqueue({ body });
      const error = (await client.accountEventLogs({ accountAddress: s.TOKEN }).catch((e: unknown) => e)) as ExplorerBadResponseError;
      expect(error).toBeInstanceOf(ExplorerBadResponseError);
      expect(error.code).toBe(code);
      expect(error.operation).toBe("accountEventLogs");
      expect(error.message).toMatch(/^accountEventLogs: /);
      expect(error.message).toMatch(problem);
      expect(error.excerpt).toBe(body.slice(0, 200) + (body.length > 200 ? "…" : ""));
      expect(server.requests).toHaveLength(1); // not retried
    });
  }

  it("a body that is not JSON (cut short) is retried; JSON of the wrong shape is not, it would only cost credits again", async () => {
    makeClient({ maxRetries: 2 });
    const good = JSON.stringify(s.list(s.eventLog));
    server.enqueue({ body: good.slice(0, 30) }, { body: good });
    expect((await client.accountEventLogs({ accountAddress: s.TOKEN })).results).toHaveLength(1);
    expect(server.requests).toHaveLength(2);

    server.enqueue({ body: '{"results":{}}' }, { body: good });
    const error = (await client.accountEventLogs({ accountAddress: s.TOKEN }).catch((e: unknown) => e)) as ExplorerBadResponseError;
    expect(error).toBeInstanceOf(ExplorerBadResponseError);
    expect(error.transient).toBe(false);
    expect(server.requests).toHaveLength(3);
  });

  it("the excerpt is cut to about 200 characters and never shows the API key", async () => {
    makeClient({ maxRetries: 0 });
    server.enqueue({ body: `not json, echoing secret-api-key-xyz ${"x".repeat(500)}` });
    const error = (await client.accountEventLogs({ accountAddress: s.TOKEN }).catch((e: unknown) => e)) as ExplorerBadResponseError;
    expect(error.excerpt.length).toBeLessThanOrEqual(201);
    expect(error.excerpt).not.toContain("secret-api-key-xyz");
    expect(`${error.message} ${error.details}`).not.toContain("secret-api-key-xyz");
  });

  it("a connection cut in the middle of the body is a network error, retried", async () => {
    makeClient({ maxRetries: 1 });
    const body = JSON.stringify(s.list(s.eventLog));
    server.enqueue({ body, cutAfterBytes: 40 }, { body });
    const page = await client.accountEventLogs({ accountAddress: s.TOKEN });
    expect(page.results).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it("a body larger than maxResponseBytes is refused with a typed error", async () => {
    makeClient({ maxResponseBytes: 1000 });
    server.enqueue({ body: s.list({ ...s.eventLog, data: `0x${"00".repeat(2000)}` }) });
    const error = await client.accountEventLogs({ accountAddress: s.TOKEN }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExplorerResponseTooLargeError);
    expect((error as ExplorerResponseTooLargeError).code).toBe("KW_EXPLORER_RESPONSE_TOO_LARGE");
  });

  it("a body that grows past maxResponseBytes without a Content-Length is cut off", async () => {
    makeClient({ maxResponseBytes: 1000 });
    // Chunked: the server sends no Content-Length, so the client must count as it reads.
    server.enqueue({ body: s.list({ ...s.eventLog, data: `0x${"00".repeat(5000)}` }), chunkBytes: 256 });
    const error = await client.accountEventLogs({ accountAddress: s.TOKEN }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExplorerResponseTooLargeError);
  });

  it("a server that does not answer in time is a timeout (retried, then reported)", async () => {
    makeClient({ headersTimeoutMs: 200, maxRetries: 1 });
    server.setDefault({ body: s.list(s.eventLog), delayMs: 2000 });
    const error = await client.accountEventLogs({ accountAddress: s.TOKEN }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExplorerTimeoutError);
    expect((error as ExplorerTimeoutError).code).toBe("KW_EXPLORER_TIMEOUT");
    expect(server.requests).toHaveLength(2);
  });
});
