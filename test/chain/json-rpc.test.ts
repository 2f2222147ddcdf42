import { afterEach, describe, expect, it } from "vitest";
import { readBalance, readTokenBalance } from "../../src/chain/chain-reads.js";
import { JsonRpcCallError, JsonRpcError, createJsonRpc, type JsonRpc } from "../../src/chain/json-rpc.js";
import { createTestCommon, type Common } from "../../src/common/common.js";
import { isAbortError } from "../../src/common/errors.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { rpcOptionsOf } from "../../src/watch/rpc-options.js";
import { startFixtureServer, type FixtureServer } from "../explorer/fixture-server.js";
import { configFromText } from "../helpers/harness.js";
import { stalledTime, virtualTime } from "../helpers/virtual-time.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function fixture(): Promise<FixtureServer> {
  const server = await startFixtureServer();
  cleanups.push(() => server.close());
  return server;
}
async function simulator(): Promise<Simulator> {
  const s = await createSimulator({ seed: 11, initialBlocks: 30 });
  cleanups.push(() => s.close());
  return s;
}
function client(common: Common, rpcUrl: string, extra: { maxRetries?: number; maxBytes?: number } = {}): JsonRpc {
  const rpc = createJsonRpc(common, { rpcUrl, retryBaseMs: 1, retryMaxMs: 5000, timeoutMs: 2000, random: () => 0, ...extra });
  cleanups.push(() => rpc.close());
  return rpc;
}
async function counted(common: Common): Promise<Record<string, number>> {
  const metric = await common.metrics.rpcRequests.get();
  return Object.fromEntries(metric.values.map((v) => [`${v.labels.method} ${v.labels.outcome}`, v.value]));
}
const result = (value: unknown) => ({ body: { jsonrpc: "2.0", id: 1, result: value } });

describe("JSON-RPC client", () => {
  it("reads the head, a KAIA balance and a token balance from the simulator, and counts each call", async () => {
    const s = await simulator();
    const common = createTestCommon();
    const rpc = client(common, s.rpcUrl);
    expect(await rpc.call("eth_blockNumber", [])).toBe(`0x${s.head().toString(16)}`);
    const wallet = s.addresses.busyWallet;
    expect(await readBalance(rpc, wallet, "latest")).toBeGreaterThan(0n);
    expect(await readBalance(rpc, wallet, s.head())).toBe(await readBalance(rpc, wallet, "latest"));
    expect(await readTokenBalance(rpc, s.addresses.tokens[1]!, wallet, "latest")).toBeGreaterThan(0n);
    expect(await counted(common)).toEqual({ "eth_blockNumber ok": 1, "eth_getBalance ok": 3, "eth_call ok": 1 });
  });

  it("sends one JSON-RPC 2.0 POST to the URL's path and query", async () => {
    const server = await fixture();
    const rpc = client(createTestCommon(), `${server.url}/v1/key-in-path?apikey=abc`);
    server.enqueue(result("0x1"));
    await rpc.call("eth_getBalance", ["0x00000000000000000000000000000000000000aa", "latest"]);
    const request = server.requests[0]!;
    expect(request).toMatchObject({ method: "POST", path: "/v1/key-in-path" });
    expect(request.query.get("apikey")).toBe("abc");
    expect(JSON.parse(request.body)).toMatchObject({ jsonrpc: "2.0", method: "eth_getBalance", params: ["0x00000000000000000000000000000000000000aa", "latest"] });
  });

  it("retries 429, 5xx and resets, then answers; every attempt is counted", async () => {
    const server = await fixture();
    const common = createTestCommon();
    const rpc = client(common, server.url);
    server.enqueue({ status: 429, body: "slow down" }, { destroy: true }, { status: 502, body: "<html>bad gateway</html>" }, result("0x2a"));
    expect(await rpc.call("eth_call", [{ to: "0x00000000000000000000000000000000000000aa", data: "0x313ce567" }, "latest"])).toBe("0x2a");
    expect(server.requests).toHaveLength(4);
    expect(await counted(common)).toEqual({ "eth_call http_error": 2, "eth_call network": 1, "eth_call ok": 1 });
  });

  it("every attempt, retries included, waits for the rate limiter first", async () => {
    const server = await fixture();
    const order: string[] = [];
    const rateLimiter = { acquire: async () => void order.push(`acquire ${server.requests.length}`), pauseFor: () => {} };
    const rpc = createJsonRpc(createTestCommon(), { rpcUrl: server.url, rateLimiter, retryBaseMs: 1, random: () => 0 });
    cleanups.push(() => rpc.close());
    server.enqueue({ status: 503, body: "" }, result("0x1"), result("0x2"));
    await rpc.call("eth_blockNumber", []);
    await rpc.call("eth_blockNumber", []);
    // Each acquire happened before the request it allowed reached the server.
    expect(order).toEqual(["acquire 0", "acquire 1", "acquire 2"]);
    expect(server.requests).toHaveLength(3);
  });

  it("a revert is a JsonRpcCallError (isRevert), not retried", async () => {
    const server = await fixture();
    const common = createTestCommon();
    const rpc = client(common, server.url);
    server.setDefault({ body: { jsonrpc: "2.0", id: 1, error: { code: -32000, message: "evm: execution reverted", data: "0x08c379a0" } } });
    const error = (await rpc.call("eth_call", [{}, "latest"]).catch((e: unknown) => e)) as JsonRpcCallError;
    expect(error).toBeInstanceOf(JsonRpcCallError);
    expect(error.code).toBe("KW_RPC_CALL");
    expect(error.isRevert).toBe(true);
    expect(error.data).toBe("0x08c379a0");
    expect(server.requests).toHaveLength(1);
    expect(await counted(common)).toEqual({ "eth_call rpc_error": 1 });
    // Geth's form: code 3.
    server.setDefault({ body: { jsonrpc: "2.0", id: 1, error: { code: 3, message: "execution reverted: no" } } });
    expect(((await rpc.call("eth_call", []).catch((e: unknown) => e)) as JsonRpcCallError).isRevert).toBe(true);
    server.setDefault({ body: { jsonrpc: "2.0", id: 1, error: { code: -32602, message: "invalid argument" } } });
    expect(((await rpc.call("eth_call", []).catch((e: unknown) => e)) as JsonRpcCallError).isRevert).toBe(false);
  });

  it("an answer over the size cap is refused and not retried", async () => {
    const server = await fixture();
    const common = createTestCommon();
    const rpc = client(common, server.url, { maxBytes: 1024 });
    server.setDefault({ body: { jsonrpc: "2.0", id: 1, result: `0x${"ab".repeat(4096)}` }, chunkBytes: 256 });
    const error = (await rpc.call("eth_call", []).catch((e: unknown) => e)) as JsonRpcError;
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error.code).toBe("KW_RPC_RESPONSE_TOO_LARGE");
    expect((error.cause as { code?: string }).code).toBe("KW_HTTP_RESPONSE_TOO_LARGE");
    expect(server.requests).toHaveLength(1);
    expect(await counted(common)).toEqual({ "eth_call too_large": 1 });
  });

  for (const [name, reply] of [
    ["a body that is not JSON", { body: "<html>gateway</html>" }],
    ["a JSON array", { body: [] }],
    ["neither result nor error", { body: { jsonrpc: "2.0", id: 1 } }],
  ] as const) {
    it(`${name} is a KW_RPC error, not retried`, async () => {
      const server = await fixture();
      const rpc = client(createTestCommon(), server.url);
      server.setDefault(reply);
      await expect(rpc.call("eth_getBalance", [])).rejects.toMatchObject({ code: "KW_RPC" });
      expect(server.requests).toHaveLength(1);
    });
  }

  it("after the retries, names the host only, never the path or query that may hold a key", async () => {
    const server = await fixture();
    const rpc = client(createTestCommon(), `${server.url}/secret-token?key=hidden`, { maxRetries: 1 });
    server.setDefault({ status: 503, body: "down" });
    const error = (await rpc.call("eth_getBalance", []).catch((e: unknown) => e)) as JsonRpcError;
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error.message).toMatch(/HTTP 503/);
    expect(error.message).not.toMatch(/secret-token|hidden/);
    expect(server.requests).toHaveLength(2);
  });

  it("the shutdown signal aborts a call waiting to retry", async () => {
    const server = await fixture();
    server.setDefault({ status: 503, headers: { "retry-after": "25" }, body: "" });
    const shutdown = new AbortController();
    const rpc = createJsonRpc(createTestCommon({ signal: shutdown.signal }), { rpcUrl: server.url, retryMaxMs: 60_000 });
    cleanups.push(() => rpc.close());
    const pending = rpc.call("eth_blockNumber", []);
    await server.requestsArrived(1);
    shutdown.abort();
    expect(isAbortError(await pending.catch((e: unknown) => e))).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it("the daemon's client keeps chain.requests_per_second across its readers and retries, on a virtual clock; retries and durations are counted like the explorer's", async () => {
    const server = await fixture();
    const config = configFromText(`
explorer: { base_url: "http://127.0.0.1:9", max_retries: 3 }
chain: { rpc_url: "${server.url}", requests_per_second: 4 }
watches: [{ name: w, account: "0x00000000000000000000000000000000000000aa" }]
rules: [{ name: r, watch: w, notify: [out] }]
sinks: { out: { type: console } }
`);
    const options = rpcOptionsOf(config);
    expect(options).toMatchObject({ rpcUrl: server.url, requestsPerSecond: 4, maxRetries: 3 });
    const common = createTestCommon();
    const time = virtualTime();
    const rpc = createJsonRpc(common, { ...options, time, retryBaseMs: 1, random: () => 0 });
    cleanups.push(() => rpc.close());
    server.enqueue({ status: 503, body: "" });
    server.setDefault(result("0x1"));
    // The head and two balance reads at once, one of them retried: four requests, 250 ms apart.
    await Promise.all([rpc.call("eth_blockNumber", []), rpc.call("eth_getBalance", []), rpc.call("eth_getBalance", [])]);
    expect(server.requests).toHaveLength(4);
    expect(time.wakes).toEqual([250, 500, 750]);
    const retries = await common.metrics.rpcRetries.get();
    expect(retries.values.map((v) => [v.labels.method, v.value])).toEqual([["eth_blockNumber", 1]]);
    const durations = await common.metrics.rpcRequestDuration.get();
    const counts = durations.values.filter((v) => v.metricName?.endsWith("_count")).map((v) => [v.labels.method, v.value]);
    expect(Object.fromEntries(counts)).toEqual({ eth_blockNumber: 2, eth_getBalance: 2 });
  });

  it("an abort cancels a rate-limit wait, and nothing is sent", async () => {
    const server = await fixture();
    server.setDefault(result("0x1"));
    const controller = new AbortController();
    const rpc = createJsonRpc(createTestCommon(), { rpcUrl: server.url, requestsPerSecond: 1, time: stalledTime(() => controller.abort()) });
    cleanups.push(() => rpc.close());
    await rpc.call("eth_blockNumber", []);
    expect(isAbortError(await rpc.call("eth_blockNumber", [], controller.signal).catch((e: unknown) => e))).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it("refuses a URL that is not http(s)", () => {
    expect(() => createJsonRpc(createTestCommon(), { rpcUrl: "ws://node.example" })).toThrow(/http or https/);
    expect(() => createJsonRpc(createTestCommon(), { rpcUrl: "not a url" })).toThrow(/not a URL/);
  });
});
