import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon, type Common } from "../../src/common/common.js";
import { isAbortError } from "../../src/common/errors.js";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { createExplorerClient, type ExplorerClient, type ExplorerClientOptions } from "../../src/explorer/client.js";
import { ExplorerHttpError, ExplorerNetworkError, shouldRetry } from "../../src/explorer/errors.js";
import { createRateLimiter } from "../../src/http/rate-limiter.js";
import { stalledTime, virtualTime } from "../helpers/virtual-time.js";
import { startFixtureServer, type FixtureServer } from "./fixture-server.js";
import * as s from "./samples.js";

let server: FixtureServer;
let client: ExplorerClient | undefined;
let common: Common;
let logLines: Record<string, unknown>[];
let logWaiters: { match: (line: Record<string, unknown>) => boolean; resolve: () => void }[];

/** Resolves once the client has logged a line that `match` accepts: the client's own signal that it reached that step. */
function logged(match: (line: Record<string, unknown>) => boolean): Promise<void> {
  if (logLines.some(match)) return Promise.resolve();
  return new Promise((resolve) => logWaiters.push({ match, resolve }));
}
/** The client logs a retry just before it waits for it (its backoff, or a Retry-After pause). */
const retryWaitBegan = () => logged((line) => typeof line.attempt === "number");

function makeClient(options: Partial<ExplorerClientOptions> = {}): ExplorerClient {
  client = createExplorerClient(common, { baseUrl: server.url, requestsPerSecond: 1000, retryBaseMs: 5, retryMaxMs: 5000, ...options });
  return client;
}

const ok = { body: s.list(s.eventLog) };
const call = () => client!.accountEventLogs({ accountAddress: s.TOKEN });

beforeEach(async () => {
  server = await startFixtureServer();
  logLines = [];
  logWaiters = [];
  const redactor = createSecretRedactor();
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split("\n").filter(Boolean)) {
        const line = JSON.parse(text) as Record<string, unknown>;
        logLines.push(line);
        for (const waiter of logWaiters.filter((w) => w.match(line))) {
          logWaiters.splice(logWaiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      done();
    },
  });
  common = createTestCommon({ logger: createLogger({ level: "debug", redactor, destination }), secrets: redactor });
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  await server.close();
});

async function metricValue(metric: { get(): Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> }, labels: Record<string, string>): Promise<number> {
  const { values } = await metric.get();
  return values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((sum, v) => sum + v.value, 0);
}

describe("retries", () => {
  // 429, 500, 502 (HTML), 503 and resets are retried against the simulator (simulator-errors.test.ts);
  // these are the statuses it never sends.
  for (const status of [504, 408]) {
    it(`retries after HTTP ${status}, then succeeds`, async () => {
      makeClient();
      server.enqueue({ status, body: { code: "SOME_CODE", title: "t", message: "m" } }, { status, body: "oops" }, ok);
      const page = await call();
      expect(page.results).toHaveLength(1);
      expect(server.requests).toHaveLength(3);
      expect(await metricValue(common.metrics.explorerRetries, { operation: "accountEventLogs" })).toBe(2);
      expect(await metricValue(common.metrics.explorerRequests, { operation: "accountEventLogs", status: String(status) })).toBe(2);
      expect(await metricValue(common.metrics.explorerRequests, { operation: "accountEventLogs", status: "200" })).toBe(1);
      const retryLogs = logLines.filter((l) => l.operation === "accountEventLogs" && typeof l.attempt === "number");
      expect(retryLogs.map((l) => l.attempt)).toEqual([1, 2]);
      const durations = await common.metrics.explorerRequestDuration.get();
      expect(durations.values.find((v) => v.metricName?.endsWith("_count") && v.labels.operation === "accountEventLogs")?.value).toBe(3);
    });
  }

  it("never writes the API key into a log line", async () => {
    makeClient({ apiKey: "very-secret-api-key" });
    server.enqueue({ status: 500, body: { code: "E", message: "echo: Bearer very-secret-api-key" } }, ok);
    await call();
    expect(logLines.length).toBeGreaterThan(0);
    expect(JSON.stringify(logLines)).not.toContain("very-secret-api-key");
  });

  it("a retry that comes due after close() fails with KW_EXPLORER_CLOSED instead of retrying", async () => {
    makeClient();
    server.setDefault({ status: 503, headers: { "retry-after": "1" }, body: "" });
    const pending = call().catch((e: unknown) => e);
    await retryWaitBegan();
    await client!.close();
    expect(await pending).toMatchObject({ code: "KW_EXPLORER_CLOSED" });
    expect(server.requests).toHaveLength(1);
  });

  it("gives up after maxRetries with the last error, carrying the API's error body", async () => {
    makeClient({ maxRetries: 2 });
    server.setDefault({ status: 429, body: { code: "API_REQUEST_QUOTA_EXCEEDED", title: "Too Many Requests", message: "quota exceeded" } });
    const error = (await call().catch((e: unknown) => e)) as ExplorerHttpError;
    expect(error).toBeInstanceOf(ExplorerHttpError);
    expect(error.code).toBe("KW_EXPLORER_HTTP");
    expect(error.status).toBe(429);
    expect(error.apiCode).toBe("API_REQUEST_QUOTA_EXCEEDED");
    expect(error.body).toEqual({ code: "API_REQUEST_QUOTA_EXCEEDED", title: "Too Many Requests", message: "quota exceeded" });
    expect(server.requests).toHaveLength(3);
  });

  // 400, 401 and 404 are not retried against the simulator either; it never answers 403.
  for (const [status, code] of [[400, "INVALID_REQUEST"], [403, "FORBIDDEN"]] as const) {
    it(`does not retry HTTP ${status}`, async () => {
      makeClient();
      server.setDefault({ status, body: { code, title: "no", message: "no" } });
      const error = (await call().catch((e: unknown) => e)) as ExplorerHttpError;
      expect(error).toBeInstanceOf(ExplorerHttpError);
      expect(error.status).toBe(status);
      expect(error.apiCode).toBe(code);
      expect(server.requests).toHaveLength(1);
    });
  }

  it("honours Retry-After as an HTTP date", async () => {
    makeClient();
    server.enqueue(() => ({ status: 503, headers: { "retry-after": new Date(Date.now() + 2000).toUTCString() }, body: "maintenance" }), ok);
    await call();
    expect(server.requests).toHaveLength(2);
    // The date has whole seconds, so the wait is between 1 and 2 seconds.
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(900);
  });

  // The backoff it cancels is 30 s, longer than this test's timeout: without the abort it cannot pass.
  it("an abort cancels a pending backoff wait", { timeout: 20_000 }, async () => {
    makeClient({ retryBaseMs: 60_000, retryMaxMs: 60_000 });
    server.setDefault({ status: 503, headers: { "retry-after": "30" }, body: "down" });
    const controller = new AbortController();
    const pending = client!.accountEventLogs({ accountAddress: s.TOKEN }, { signal: controller.signal });
    await retryWaitBegan();
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it("the shutdown signal of common aborts calls too", { timeout: 20_000 }, async () => {
    const shutdown = new AbortController();
    common = { ...common, signal: shutdown.signal };
    makeClient({ retryBaseMs: 60_000, retryMaxMs: 60_000 });
    server.setDefault({ status: 503, headers: { "retry-after": "30" }, body: "down" });
    const pending = call();
    await retryWaitBegan();
    shutdown.abort();
    expect(isAbortError(await pending.catch((e: unknown) => e))).toBe(true);
  });

  // The engine passes one signal for all its ticks; the client links it to the shutdown signal
  // once and keeps the link for every later call that passes it.
  it("calls that share a caller's signal are stopped by the shutdown signal, after earlier calls with it have ended", async () => {
    const shutdown = new AbortController();
    common = { ...common, signal: shutdown.signal };
    makeClient({ retryBaseMs: 60_000, retryMaxMs: 60_000 });
    const ticks = new AbortController();
    server.setDefault(ok);
    await client!.accountEventLogs({ accountAddress: s.TOKEN }, { signal: ticks.signal });
    await client!.accountEventLogs({ accountAddress: s.TOKEN }, { signal: ticks.signal });
    // The three calls are held in flight (no answer comes back, so nothing pauses the limiter
    // and each of them sends): the shutdown then finds all three at the same step, whatever
    // the machine's timers did, instead of some parked behind a Retry-After pause and some sent.
    server.setDefault({ status: 503, delayMs: 600_000, body: "down" });
    const pending = [1, 2, 3].map(() => client!.accountEventLogs({ accountAddress: s.TOKEN }, { signal: ticks.signal }).catch((e: unknown) => e));
    await server.requestsArrived(5);
    shutdown.abort();
    for (const error of await Promise.all(pending)) expect(isAbortError(error)).toBe(true);
    expect(ticks.signal.aborted).toBe(false);
    expect(server.requests).toHaveLength(5);
  });

  it("an aborted signal sends nothing", async () => {
    makeClient();
    const error = await client!.accountEventLogs({ accountAddress: s.TOKEN }, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    expect(server.requests).toHaveLength(0);
  });
});

describe("rate limiter", () => {
  // On a virtual clock: spacing measured on the machine's timers failed once under load (a
  // late first request shrinks the measured gap while the later slots stay where they were).
  it("spaces requests across concurrent calls of one client", async () => {
    const time = virtualTime(1_000);
    makeClient({ rateLimiter: createRateLimiter(10, time) });
    server.setDefault(ok);
    await Promise.all(Array.from({ length: 6 }, () => call()));
    expect(server.requests).toHaveLength(6);
    // The first goes at once; each other one waits for its own slot, 100 ms after the previous.
    expect(time.wakes).toEqual([1_100, 1_200, 1_300, 1_400, 1_500]);
  });

  it("gives a slot to each retry too, and a caller that comes after a pause goes at once", async () => {
    const time = virtualTime();
    makeClient({ rateLimiter: createRateLimiter(2, time) });
    server.enqueue({ status: 503, body: "" }, ok);
    await call();
    expect(server.requests).toHaveLength(2);
    expect(time.wakes).toEqual([500]);
    // Later than the next free slot: no wait.
    time.advance(10_000);
    server.setDefault(ok);
    await call();
    expect(server.requests).toHaveLength(3);
    expect(time.wakes).toEqual([500]);
  });

  it("an abort cancels a rate-limit wait", async () => {
    const controller = new AbortController();
    makeClient({ rateLimiter: createRateLimiter(0.01, stalledTime(() => controller.abort())) });
    server.setDefault(ok);
    await call();
    const pending = client!.accountEventLogs({ accountAddress: s.TOKEN }, { signal: controller.signal });
    expect(isAbortError(await pending.catch((e: unknown) => e))).toBe(true);
    expect(server.requests).toHaveLength(1);
  });
});

describe("retry policy pieces", () => {
  it("shouldRetry decides from the error type", () => {
    const http = (status: number) => new ExplorerHttpError({ operation: "nftItem", status });
    for (const status of [408, 429, 500, 502, 503, 504]) expect(shouldRetry(http(status))).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 422, 501]) expect(shouldRetry(http(status))).toBe(false);
    expect(shouldRetry(new ExplorerNetworkError("nftItem", new Error("ECONNRESET")))).toBe(true);
    expect(shouldRetry(new Error("something"))).toBe(false);
    expect(shouldRetry(new DOMException("aborted", "AbortError"))).toBe(false);
  });

});
