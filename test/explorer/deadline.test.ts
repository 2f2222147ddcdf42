import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createHeadReader } from "../../src/chain/head.js";
import { JsonRpcTimeoutError } from "../../src/chain/json-rpc.js";
import { createTestCommon, type Common } from "../../src/common/common.js";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createExplorerClient } from "../../src/explorer/client.js";
import { ExplorerDeadlineError, shouldRetry } from "../../src/explorer/errors.js";
import { HttpDeadlineError } from "../../src/http/errors.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { configFromText, logCapture, tempDir } from "../helpers/harness.js";
import { waitFor } from "../helpers/child.js";
import { observeFor } from "../helpers/wait-for.js";

/*
 * Issue 20, item 2: `explorer.timeout` bounds silence, not a request. A server that sends
 * a byte every DRIP_MS never goes silent for long, and kept a source "running" for minutes.
 * The deadlines here are tiny and the drip lasts far longer (DRIP_FOR_MS), so the outcome
 * does not depend on the machine's speed: only a deadline can end these requests.
 */
const DRIP_MS = 50;
const DRIP_FOR_MS = 30_000;
const ADDRESS = "0x1111111111111111111111111111111111111111";

/** Headers at once, then the body one byte at a time, never finished before DRIP_FOR_MS. */
function drip(res: ServerResponse, timers: Set<NodeJS.Timeout>): void {
  res.writeHead(200, { "content-type": "application/json" });
  const body = '{"results":[],"paging":{"total_count":0,"current_page":1,"last":true,"total_page":1}}'.padEnd(DRIP_FOR_MS / DRIP_MS, " ");
  let sent = 0;
  const timer = setInterval(() => {
    if (res.destroyed || sent >= body.length) {
      clearInterval(timer);
      timers.delete(timer);
      res.end();
      return;
    }
    res.write(body[sent++] ?? " ");
  }, DRIP_MS);
  timers.add(timer);
}

let server: Server;
let url: string;
/** GET requests: the explorer's (the head read is a POST). */
let requests = 0;
const timers = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    if (req.method !== "POST") requests++;
    drip(res, timers);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const timer of timers) clearInterval(timer);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});


const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("an explorer request's deadline", () => {
  it("ends a drip-fed answer with KW_EXPLORER_DEADLINE, a retryable error", async () => {
    const client = createExplorerClient(createTestCommon(), { baseUrl: url, maxRetries: 0, requestDeadlineMs: 200, bodyTimeoutMs: 60_000, headersTimeoutMs: 60_000 });
    cleanups.push(() => client.close());
    const error = await client.accountEventLogs({ accountAddress: ADDRESS }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExplorerDeadlineError);
    expect((error as ExplorerDeadlineError).code).toBe("KW_EXPLORER_DEADLINE");
    expect((error as ExplorerDeadlineError).message).toBe("accountEventLogs: no complete answer within the request deadline of 200 ms");
    expect(shouldRetry(error)).toBe(true);
  });

  it("is retried, and each retry is logged with the usual keys", async () => {
    const { destination, lines } = logCapture();
    const redactor = createSecretRedactor();
    const common: Common = createTestCommon({ logger: createLogger({ level: "debug", redactor, destination }), secrets: redactor });
    const client = createExplorerClient(common, { baseUrl: url, maxRetries: 2, retryBaseMs: 1, retryMaxMs: 1, requestDeadlineMs: 200, bodyTimeoutMs: 60_000 });
    cleanups.push(() => client.close());
    const before = requests;
    const error = await client.accountEventLogs({ accountAddress: ADDRESS }).catch((e: unknown) => e);
    expect((error as ExplorerDeadlineError).code).toBe("KW_EXPLORER_DEADLINE");
    expect(requests - before).toBe(3);
    const retries = lines.filter((line) => String(line.msg).includes("retrying"));
    expect(retries.map((line) => [line.operation, line.attempt, line.error])).toEqual([
      ["accountEventLogs", 1, "KW_EXPLORER_DEADLINE: accountEventLogs: no complete answer within the request deadline of 200 ms"],
      ["accountEventLogs", 2, "KW_EXPLORER_DEADLINE: accountEventLogs: no complete answer within the request deadline of 200 ms"],
    ]);
    expect(retries.every((line) => typeof line.delay_ms === "number")).toBe(true);
  });

  it("bounds the JSON-RPC head read too", async () => {
    const head = createHeadReader(createTestCommon(), { rpcUrl: url, maxRetries: 0, timeoutMs: 60_000, deadlineMs: 200 });
    cleanups.push(() => head.close());
    const error = await head.blockNumber().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JsonRpcTimeoutError);
    expect((error as JsonRpcTimeoutError).code).toBe("KW_RPC_DEADLINE");
    expect((error as JsonRpcTimeoutError).message).toMatch(/^eth_blockNumber at 127\.0\.0\.1:\d+: no complete answer within the request deadline of 200 ms$/);
    expect((error as JsonRpcTimeoutError).cause).toBeInstanceOf(HttpDeadlineError);
  });
});

describe("a tick's deadline", () => {
  let sim: Simulator;
  beforeAll(async () => {
    // The head comes from the simulator; only the explorer drips.
    sim = await createSimulator({ seed: 3, initialBlocks: 20, blockTime: 60_000 });
  });
  afterAll(() => sim.close());

  it("aborts a tick stuck on a drip-fed explorer: logged at warn, counted, and failing in /status and /readyz", async () => {
    const dir = tempDir("kaiawatch-tick-deadline-");
    cleanups.push(() => dir.remove());
    // The request deadline is long, so only the tick's own deadline can end the tick.
    const config = configFromText(`
explorer: { base_url: "${url}", request_deadline: 10m, timeout: 10m, max_retries: 0 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: "127.0.0.1:0" }
operational: { source_failing_after: 1ms }
defaults: { schedule: "0 0 0 1 1 *", start: -5, jitter: 0s, tick_timeout: 300ms }
watches: [ { name: token, contract: "${ADDRESS}" } ]
rules: [ { name: logs, watch: token, notify: [out] } ]
sinks: { out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" } }
`);
    const { destination, lines } = logCapture();
    const redactor = createSecretRedactor();
    const common = createTestCommon({ logger: createLogger({ level: "info", redactor, destination }), secrets: redactor });
    const daemon = await createDaemon(common, { config });
    cleanups.push(() => daemon.stop());
    await daemon.start();

    const aborted = () => lines.find((line) => line.msg === "tick aborted at its deadline; the cursor stays after the last committed window and the next tick goes on");
    await waitFor(() => aborted() !== undefined, 20_000, "the tick to be aborted").catch((e: unknown) => {
      throw new Error(`${String(e)}\n${lines.map((l) => JSON.stringify(l)).join("\n")}`);
    });
    const line = aborted()!;
    expect(line.level).toBe(40);
    expect(line.watch).toBe("token");
    expect(typeof line.source).toBe("string");
    expect(typeof line.duration_ms).toBe("number");
    expect(line.err).toBe(`KW_WATCH_TICK_TIMEOUT: the tick of ${String(line.source)} ran longer than tick_timeout (300 ms) and was aborted`);

    const [state] = daemon.engine.states();
    expect(state).toMatchObject({ running: false, last_outcome: "error", last_ok_at: null });
    expect(state?.last_error).toContain("KW_WATCH_TICK_TIMEOUT");
    const metrics = await common.metrics.registry.metrics();
    expect(metrics).toMatch(/kaiawatch_source_ticks_total\{watch="token",source="[^"]+",outcome="timeout"\} 1/);

    const status = (await (await fetch(`${daemon.statusUrl()}/status`)).json()) as { sources: Array<{ last_outcome: string; last_error: string }> };
    expect(status.sources[0]?.last_outcome).toBe("error");
    expect(status.sources[0]?.last_error).toContain("KW_WATCH_TICK_TIMEOUT");
    // Failing (503) once its ticks have failed for operational.source_failing_after (1 ms here).
    await observeFor(5);
    const ready = await fetch(`${daemon.statusUrl()}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain("KW_WATCH_TICK_TIMEOUT");
  }, 30_000);
});
