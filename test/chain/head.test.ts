import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { isAbortError } from "../../src/common/errors.js";
import { ChainHeadError, createHeadReader, type HeadReader } from "../../src/chain/head.js";
import { JsonRpcHttpError } from "../../src/chain/json-rpc.js";
import { startFixtureServer, type FixtureServer } from "../explorer/fixture-server.js";

let server: FixtureServer;
let reader: HeadReader | undefined;

beforeEach(async () => {
  server = await startFixtureServer();
});
afterEach(async () => {
  await reader?.close();
  reader = undefined;
  await server.close();
});

const result = (hex: unknown) => ({ body: { jsonrpc: "2.0", id: 1, result: hex } });

function makeReader(path = "/", maxRetries = 3): HeadReader {
  reader = createHeadReader(createTestCommon(), { rpcUrl: `${server.url}${path}`, maxRetries, retryBaseMs: 1, retryMaxMs: 5000, timeoutMs: 2000 });
  return reader;
}

describe("chain head reader", () => {
  it("asks eth_blockNumber by JSON-RPC POST and returns the hex result as a number", async () => {
    makeReader("/rpc/v1?key=abc");
    server.enqueue(result("0x8f0d180"));
    expect(await reader!.blockNumber()).toBe(150_000_000);
    const request = server.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/rpc/v1");
    expect(request.query.get("key")).toBe("abc");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request.body)).toMatchObject({ jsonrpc: "2.0", method: "eth_blockNumber", params: [] });
  });

  it("retries 429/503 and connection resets with the explorer's policy", async () => {
    makeReader();
    server.enqueue({ status: 429, body: "slow down" }, { destroy: true }, { status: 503, headers: { "retry-after": "1" }, body: "" }, result("0x10"));
    expect(await reader!.blockNumber()).toBe(16);
    expect(server.requests).toHaveLength(4);
    expect(server.requests[3]!.at - server.requests[2]!.at).toBeGreaterThanOrEqual(900);
  });

  it("a JSON-RPC error object is a KW_CHAIN_HEAD error, not retried", async () => {
    makeReader();
    server.setDefault({ body: { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "method not found" } } });
    const error = (await reader!.blockNumber().catch((e: unknown) => e)) as ChainHeadError;
    expect(error).toBeInstanceOf(ChainHeadError);
    expect(error.code).toBe("KW_CHAIN_HEAD");
    expect(error.message).toContain("-32601");
    expect(error.message).toContain("method not found");
    expect(server.requests).toHaveLength(1);
  });

  for (const [name, reply] of [
    ["a decimal result", result("150000000")],
    ["a numeric result", result(150000000)],
    ["a missing result", { body: { jsonrpc: "2.0", id: 1 } }],
    ["a result beyond a safe integer", result("0xffffffffffffffff")],
    ["a body that is not JSON", { body: "<html>gateway</html>" }],
  ] as const) {
    it(`${name} is a KW_CHAIN_HEAD error`, async () => {
      makeReader();
      server.setDefault(reply);
      await expect(reader!.blockNumber()).rejects.toBeInstanceOf(ChainHeadError);
      expect(server.requests).toHaveLength(1);
    });
  }

  it("after the retries, a 5xx is the node's KW_RPC_HTTP error, naming only the host", async () => {
    makeReader("/secret-path-token", 1);
    server.setDefault({ status: 502, body: "bad gateway" });
    const error = (await reader!.blockNumber().catch((e: unknown) => e)) as JsonRpcHttpError;
    expect(error).toBeInstanceOf(JsonRpcHttpError);
    expect(error.code).toBe("KW_RPC_HTTP");
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/^eth_blockNumber at 127\.0\.0\.1:\d+: HTTP 502 \(bad gateway\)$/);
    expect(error.message).not.toContain("secret-path-token");
    expect(server.requests).toHaveLength(2);
  });

  it("does not retry a 401", async () => {
    makeReader();
    server.setDefault({ status: 401, body: "unauthorized" });
    await expect(reader!.blockNumber()).rejects.toThrow(/HTTP 401/);
    expect(server.requests).toHaveLength(1);
  });

  // The 25 s Retry-After is longer than this test's timeout: without the abort it cannot pass.
  it("an abort cancels the backoff", { timeout: 20_000 }, async () => {
    server.setDefault({ status: 503, headers: { "retry-after": "25" }, body: "" });
    reader = createHeadReader(createTestCommon(), { rpcUrl: server.url, retryMaxMs: 60_000 });
    const controller = new AbortController();
    const pending = reader.blockNumber(controller.signal);
    await server.requestsArrived(1);
    controller.abort();
    expect(isAbortError(await pending.catch((e: unknown) => e))).toBe(true);
    expect(server.requests).toHaveLength(1);
  });
});
