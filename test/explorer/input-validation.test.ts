import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { ExplorerInvalidParameterError } from "../../src/explorer/errors.js";
import { startFixtureServer, type FixtureServer } from "./fixture-server.js";
import * as s from "./samples.js";

let server: FixtureServer;
let client: ExplorerClient;

beforeAll(async () => {
  server = await startFixtureServer();
  server.setDefault({ body: s.list(s.eventLog) });
  client = createExplorerClient(createTestCommon(), { baseUrl: server.url, requestsPerSecond: 1000 });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

type Case = [description: string, parameter: string, call: () => Promise<unknown>];

const bad = (params: Record<string, unknown>) => params as never;
const cases: Case[] = [
  ["address too short", "accountAddress", () => client.accountEventLogs(bad({ accountAddress: "0x1234" }))],
  ["address without 0x", "accountAddress", () => client.accountNftTransfers(bad({ accountAddress: "1111111111111111111111111111111111111111" }))],
  ["address with a non-hex digit", "tokenAddress", () => client.nftTransfers(bad({ tokenAddress: "0x333333333333333333333333333333333333333g" }))],
  ["address as a path-injection attempt", "tokenAddress", () => client.nftItem(bad({ tokenAddress: "../../admin", tokenId: "1" }))],
  ["contractAddress invalid", "contractAddress", () => client.accountNftTransfers(bad({ accountAddress: s.ADDR_A, contractAddress: "0xzz" }))],
  ["missing required address", "accountAddress", () => client.accountInternalTransactions(bad({}))],
  ["tx hash of 63 hex digits", "transactionHash", () => client.transactionEventLogs(bad({ transactionHash: `0x${"a".repeat(63)}` }))],
  ["tx hash as a number", "transactionHash", () => client.transactionNftTransfers(bad({ transactionHash: 12 }))],
  ["negative block number", "blockNumber", () => client.blockInternalTransactions(bad({ blockNumber: -1 }))],
  ["fractional block number", "blockNumber", () => client.blockInternalTransactions(bad({ blockNumber: 1.5 }))],
  ["unsafe block number", "blockNumber", () => client.blockInternalTransactions(bad({ blockNumber: 2 ** 53 }))],
  ["block number as a string", "blockNumberStart", () => client.accountEventLogs(bad({ accountAddress: s.TOKEN, blockNumberStart: "5" }))],
  ["page 0", "page", () => client.accountEventLogs(bad({ accountAddress: s.TOKEN, page: 0 }))],
  ["size 0", "size", () => client.accountEventLogs(bad({ accountAddress: s.TOKEN, size: 0 }))],
  ["size 2001", "size", () => client.accountEventLogs(bad({ accountAddress: s.TOKEN, size: 2001 }))],
  ["start after end", "blockNumberStart", () => client.accountEventLogs({ accountAddress: s.TOKEN, blockNumberStart: 11, blockNumberEnd: 10 })],
  ["range of 1001 blocks", "blockNumberEnd", () => client.accountInternalTransactions({ accountAddress: s.ADDR_A, blockNumberStart: 0, blockNumberEnd: 1000 })],
  ["signature not a hash", "signature", () => client.accountEventLogs({ accountAddress: s.TOKEN, signature: "Transfer(address,address,uint256)" })],
  ["tokenId in hex", "tokenId", () => client.nftItem({ tokenAddress: s.TOKEN, tokenId: "0x1f" })],
  ["tokenId negative bigint", "tokenId", () => client.nftTransfers({ tokenAddress: s.TOKEN, tokenId: -1n })],
  ["keyword neither address nor token id", "keyword", () => client.nftInventoryDetails({ tokenAddress: s.TOKEN, keyword: "cats" })],
  ["excludeIfTokenUriIsEmpty as a string", "excludeIfTokenUriIsEmpty", () => client.accountNftInventories(bad({ accountAddress: s.ADDR_A, excludeIfTokenUriIsEmpty: "false" }))],
  ["a parameter the operation does not have", "blockNumberStart", () => client.transactionEventLogs(bad({ transactionHash: s.TX, blockNumberStart: 1 }))],
  ["a null parameter", "signature", () => client.transactionEventLogs(bad({ transactionHash: s.TX, signature: null }))],
];

describe("input checks", () => {
  for (const [description, parameter, call] of cases) {
    it(`${description}: KW_EXPLORER_INVALID_PARAMETER names ${parameter}, nothing sent`, async () => {
      const error = (await call().catch((e: unknown) => e)) as ExplorerInvalidParameterError;
      expect(error).toBeInstanceOf(ExplorerInvalidParameterError);
      expect(error.code).toBe("KW_EXPLORER_INVALID_PARAMETER");
      expect(error.parameter).toBe(parameter);
      expect(error.message).toContain(parameter);
      expect(server.requests).toHaveLength(0);
    });
  }

  it("the edges of the limits are accepted", async () => {
    await client.accountEventLogs({ accountAddress: s.ADDR_A, blockNumberStart: 0, blockNumberEnd: 999, page: 1, size: 2000 });
    await client.accountEventLogs({ accountAddress: s.TOKEN.toUpperCase().replace("0X", "0x"), blockNumberStart: 7, blockNumberEnd: 7, signature: s.TOPIC.toUpperCase().replace("0X", "0x") });
    expect(server.requests).toHaveLength(2);
    // The signature is sent lowercase, as the API stores topic0.
    expect(server.requests[1]!.query.get("signature")).toBe(s.TOPIC);
    server.requests.length = 0;
  });
});
