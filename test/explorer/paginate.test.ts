import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { ExplorerHttpError } from "../../src/explorer/errors.js";
import type { EventLog, ListResponse } from "../../src/explorer/types.js";
import { startFixtureServer, type FixtureServer, type SeenRequest } from "./fixture-server.js";
import * as s from "./samples.js";

let server: FixtureServer;
let client: ExplorerClient;

beforeEach(async () => {
  server = await startFixtureServer();
  client = createExplorerClient(createTestCommon(), { baseUrl: server.url, requestsPerSecond: 1000, retryBaseMs: 1 });
});
afterEach(async () => {
  await client.close();
  await server.close();
});

/** A page of `count` logs numbered from the page position, with the given paging. */
function page(request: SeenRequest, count: number, paging: { total_count: number; last: boolean; total_page: number }) {
  const current = Number(request.query.get("page"));
  const size = Number(request.query.get("size"));
  const results = Array.from({ length: count }, (_, i) => ({ ...s.eventLog, log_index: (current - 1) * size + i }));
  return { body: { results, paging: { ...paging, current_page: current } } };
}

async function collect(iterator: AsyncIterable<ListResponse<EventLog>>): Promise<number[]> {
  const seen: number[] = [];
  for await (const response of iterator) seen.push(...response.results.map((r) => r.log_index));
  return seen;
}

/** The pages the server was asked for, once every request in flight has ended. */
async function pagesAsked(): Promise<number[]> {
  await client.close();
  return server.requests.map((r) => Number(r.query.get("page"))).sort((a, b) => a - b);
}

const params = { accountAddress: s.TOKEN, blockNumberStart: 1, blockNumberEnd: 100, size: 3 };

// The stop conditions a consistent service never shows apart (`last` against `total_page`, a
// short page that is not the last). Paging real chain data, "totalPage is over.", params.page,
// the default size and breaking out are tested against the simulator (simulator-operations/-errors).
describe("paginate", () => {
  it("stops on paging.last", async () => {
    // total_page says 10, but the server says page 2 is the last: trust `last`.
    server.setDefault((r) => page(r, 3, { total_count: 30, total_page: 10, last: r.query.get("page") === "2" }));
    expect(await collect(client.paginate("accountEventLogs", params))).toEqual([0, 1, 2, 3, 4, 5]);
    // Page 3 may have been asked for beside page 2 (page 1 counted it), never read.
    const asked = await pagesAsked();
    expect(asked).toEqual(expect.arrayContaining([1, 2]));
    expect(Math.max(...asked)).toBeLessThanOrEqual(3);
    // Every page carries the caller's filters and the page size.
    for (const r of server.requests) expect(Object.fromEntries(r.query)).toMatchObject({ blockNumberStart: "1", blockNumberEnd: "100", size: "3" });
  });

  it("stops on a short page", async () => {
    server.setDefault((r) => page(r, r.query.get("page") === "3" ? 2 : 3, { total_count: 99, total_page: 99, last: false }));
    expect(await collect(client.paginate("accountEventLogs", params))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Page 4 may have been asked for beside page 3 (page 2 counted 99), never read.
    const asked = await pagesAsked();
    expect(asked).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(Math.max(...asked)).toBeLessThanOrEqual(4);
  });

  it("stops when current_page reaches total_page", async () => {
    server.setDefault((r) => page(r, 3, { total_count: 6, total_page: 2, last: false }));
    expect(await collect(client.paginate("accountEventLogs", params))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(server.requests).toHaveLength(2);
  });

  it("any other 400 is an error", async () => {
    server.setDefault({ status: 400, body: { code: "INVALID_REQUEST", title: "Bad Request", message: "size must be <= 2000" } });
    await expect(collect(client.paginate("accountEventLogs", params))).rejects.toBeInstanceOf(ExplorerHttpError);
  });
});

