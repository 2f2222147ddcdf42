/**
 * The explorer's two spellings of field names: snake_case, as klaytn/finder-api writes them
 * (and explorer-api.md), and camelCase, as KaiaScan's live documentation shows every answer.
 * Each answer of the corpus (test/fixtures/explorer/) is served as it is and with every key
 * in camelCase: both read the same, and the client counts which spelling it read.
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { ExplorerShapeError } from "../../src/explorer/errors.js";
import type { OperationName } from "../../src/explorer/operations.js";
import { camelCaseOf, spellingOf } from "../../src/explorer/spelling.js";
import { startFixtureServer, type FixtureServer } from "./fixture-server.js";
import { CORPUS, type CorpusFixture } from "../helpers/explorer-corpus.js";


const FIXTURES = CORPUS;

/** Every key of the text in camelCase, numbers untouched (re-serialising would round them). */
const camelCaseText = (text: string) => text.replace(/"([a-z0-9]+(?:_[a-z0-9]+)+)"(\s*):/g, (_, key: string, space: string) => `"${camelCaseOf(key)}"${space}:`);

/** Operations whose records are passed on whole, and fields passed on whole: what is inside keeps the server's spelling. */
const OPAQUE = new Set<OperationName>(["nftItem", "nftInventoryDetails", "accountNftInventories"]);
const PASSED_WHOLE: Partial<Record<OperationName, string[]>> = { transactionInternalTransactions: ["from", "to", "input_data"] };

/** The answer with the fields passed on whole left out. */
function withoutPassedWhole(operation: OperationName, answer: unknown): unknown {
  const fields = PASSED_WHOLE[operation] ?? [];
  const page = answer as { results: Record<string, unknown>[] };
  return { ...page, results: page.results.map((record) => Object.fromEntries(Object.entries(record).filter(([key]) => !fields.includes(key)))) };
}

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

async function read(fixture: CorpusFixture, text: string): Promise<unknown> {
  server.enqueue({ body: text, headers: { "content-type": "application/json" } });
  return await (client[fixture.operation] as (params: unknown) => Promise<unknown>)(fixture.request);
}

describe("an answer in camelCase reads as the same answer in snake_case", () => {
  for (const fixture of FIXTURES) {
    it(`${fixture.file} in camelCase`, async () => {
      const camel = camelCaseText(fixture.text);
      expect(camel, "the fixture has keys to respell").not.toBe(fixture.text);
      const snakeAnswer = await read(fixture, fixture.text);
      const snakeDrift = Object.keys(client.unknownFields()[fixture.operation] ?? {});
      expect(client.fieldSpellings()).toEqual({ snake_case: 1, camelCase: 0 });
      const camelAnswer = await read(fixture, camel);
      expect(client.fieldSpellings()).toEqual({ snake_case: 1, camelCase: 1 });
      if (!OPAQUE.has(fixture.operation)) expect(withoutPassedWhole(fixture.operation, camelAnswer)).toEqual(withoutPassedWhole(fixture.operation, snakeAnswer));
      // Undocumented fields keep the spelling they came in: drift names them so.
      const drift = Object.keys(client.unknownFields()[fixture.operation] ?? {});
      expect(new Set(drift)).toEqual(new Set([...snakeDrift, ...fixture.unknown_fields.map(camelCaseOf)]));
    });
  }

  it("an exact amount under a camelCase key keeps every digit", async () => {
    const fixture = FIXTURES.find((f) => f.operation === "accountNftTransfers")!;
    const camel = camelCaseText(fixture.text).replace(/"tokenCount"\s*:\s*[0-9]+/, '"tokenCount": 123456789012345678901');
    const answer = (await read(fixture, camel)) as { results: { token_count: string }[] };
    expect(answer.results[0]!.token_count).toBe("123456789012345678901");
  });

  it("a field written in both spellings is refused, naming it (which value is meant?)", async () => {
    const fixture = FIXTURES.find((f) => f.operation === "accountEventLogs")!;
    const both = camelCaseText(fixture.text).replace('"logIndex"', '"log_index": 1, "logIndex"');
    const error = await read(fixture, both).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ExplorerShapeError);
    expect((error as ExplorerShapeError).message).toContain("results[].log_index");
    expect((error as ExplorerShapeError).message).toContain("both spellings");
  });

  it("the spelling of a page is told by its paging or its first record, whatever its length", () => {
    const paging = { total_count: 0, current_page: 1, last: true, total_page: 0 };
    expect(spellingOf("accountEventLogs", { results: [], paging }, true)).toBe("snake_case");
    expect(spellingOf("accountEventLogs", { results: [], paging: { totalCount: 0, currentPage: 1, last: true, totalPage: 0 } }, true)).toBe("camelCase");
    expect(spellingOf("accountEventLogs", { results: [{ logIndex: 1 }], paging }, true)).toBe("camelCase");
    expect(spellingOf("nftItem", { tokenUri: "x" }, false)).toBe("camelCase");
    expect(spellingOf("nftItem", { token_uri: "x" }, false)).toBe("snake_case");
  });
});
