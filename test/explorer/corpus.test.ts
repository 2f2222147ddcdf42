/**
 * The corpus of server-shaped answers (test/fixtures/explorer/): one file per operation and
 * variant, each naming where its shape comes from (a file of klaytn/finder-api, the
 * predecessor of KaiaScan's server, or explorer-api.md). Each answer is served byte for byte
 * and read through the client: it must pass the boundary, its undocumented fields must be
 * the ones the file lists, and the records kaiawatch watches must normalise.
 */
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { ExplorerError } from "../../src/explorer/errors.js";
import type { OperationName } from "../../src/explorer/operations.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { startFixtureServer, type FixtureServer } from "./fixture-server.js";
import { CORPUS } from "../helpers/explorer-corpus.js";

const DIR = new URL("../fixtures/explorer/", import.meta.url);

const FIXTURES = CORPUS;

const FAMILY_OF: Partial<Record<OperationName, keyof typeof NORMALIZERS>> = {
  accountNftTransfers: "nft_transfers",
  nftTransfers: "nft_transfers",
  transactionNftTransfers: "nft_transfers",
  accountInternalTransactions: "internal_transactions",
  blockInternalTransactions: "internal_transactions",
  transactionEventLogs: "event_logs",
  accountEventLogs: "event_logs",
};

let server: FixtureServer;
let client: ExplorerClient;
beforeEach(async () => {
  server = await startFixtureServer();
  client = createExplorerClient(createTestCommon(), { baseUrl: server.url, requestsPerSecond: 1000, maxRetries: 0 });
});
afterEach(async () => {
  await client.close();
  await server.close();
});

describe("every operation reads every shape the server has been seen in", () => {
  it("the corpus covers the eleven operations, each labelled with where its shape comes from", () => {
    expect(new Set(FIXTURES.map((f) => f.operation)).size).toBe(11);
    for (const f of FIXTURES) expect(f.source.length, f.file).toBeGreaterThan(20);
  });

  for (const fixture of FIXTURES) {
    it(`${fixture.file}: ${fixture.operation}, ${fixture.variant}`, async () => {
      server.enqueue({ body: fixture.text, headers: { "content-type": "application/json" } });
      const call = client[fixture.operation] as (params: unknown) => Promise<unknown>;
      const answer = (await call(fixture.request)) as { results?: unknown[] };
      expect(Object.keys(client.unknownFields()[fixture.operation] ?? {}).sort()).toEqual([...fixture.unknown_fields].sort());
      const family = FAMILY_OF[fixture.operation];
      if (family === undefined) return;
      for (const data of answer.results ?? []) {
        const record = NORMALIZERS[family](data as never);
        expect(Number.isSafeInteger(record.block)).toBe(true);
        expect(record.key).not.toBe("");
      }
    });
  }

  it("an amount with more digits than a float holds is read exactly", async () => {
    const fixture = FIXTURES.find((f) => f.file.startsWith("08-") && f.file.includes("document"))!;
    server.enqueue({ body: fixture.text });
    const page = await client.blockInternalTransactions({ blockNumber: 150000900 });
    expect(page.results[0]!.amount).toBe("123456789012345678901.123456789012345678");
  });
});

describe("every error the server answers with", () => {
  const { errors } = JSON.parse(readFileSync(new URL("errors.server.json", DIR), "utf8")) as { errors: { status: number; body: unknown; expect: string }[] };
  for (const e of errors) {
    it(`${e.status} ${(e.body as { code: string }).code}: ${e.expect}`, async () => {
      server.enqueue({ status: e.status, body: e.body });
      if (e.expect.startsWith("past the last page")) {
        const pages = [];
        for await (const page of client.paginate("accountEventLogs", { accountAddress: "0xe0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3", page: 9 })) pages.push(page);
        expect(pages).toEqual([]);
        return;
      }
      const error = await client.accountInternalTransactions({ accountAddress: "0xe0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3" }).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(ExplorerError);
      expect((error as ExplorerError).code).toBe(e.expect);
    });
  }
});
