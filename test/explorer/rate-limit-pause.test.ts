import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { createRateLimiter } from "../../src/http/rate-limiter.js";
import { virtualTime } from "../helpers/virtual-time.js";
import { startFixtureServer, type FixtureServer } from "./fixture-server.js";
import * as s from "./samples.js";

/**
 * A Retry-After is the key's, not one request's: with several requests in flight (operation
 * 8 catching up), every one of them waits it out, the retried one included. On the
 * limiter's virtual clock: no test here waits on the machine's timers.
 */
describe("rate limiter pause", () => {
  it("holds the callers that come during the pause until it ends, then spaces them again", async () => {
    const time = virtualTime(1_000);
    const limiter = createRateLimiter(10, time);
    limiter.pauseFor(2_000);
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i++) await limiter.acquire(signal);
    expect(time.wakes).toEqual([3_000, 3_100, 3_200]);
  });

  it("holds a caller that was already waiting for its slot when the pause began", async () => {
    const clock = virtualTime(0);
    let paused = false;
    const time = {
      now: clock.now,
      async sleep(ms: number, signal: AbortSignal) {
        // Another request is told Retry-After while this one waits for its slot.
        if (!paused) {
          paused = true;
          limiter.pauseFor(5_000);
        }
        await clock.sleep(ms, signal);
      },
    };
    const limiter = createRateLimiter(10, time);
    const signal = new AbortController().signal;
    await limiter.acquire(signal); // at 0, no wait
    await limiter.acquire(signal); // its slot at 100, then the pause to 5,000
    expect(clock.wakes).toEqual([100, 5_000]);
  });

  it("a pause holds callers of an unlimited limiter too", async () => {
    const time = virtualTime(0);
    const limiter = createRateLimiter(Infinity, time);
    limiter.pauseFor(1_500);
    await limiter.acquire(new AbortController().signal);
    expect(time.wakes).toEqual([1_500]);
  });
});

describe("explorer client: Retry-After", () => {
  let server: FixtureServer;
  let client: ExplorerClient | undefined;
  beforeEach(async () => {
    server = await startFixtureServer();
  });
  afterEach(async () => {
    await client?.close();
    await server.close();
  });

  it("pauses the client's rate limiter, and the retry waits for it there rather than on a timer of its own", async () => {
    const time = virtualTime(10_000);
    client = createExplorerClient(createTestCommon(), { baseUrl: server.url, rateLimiter: createRateLimiter(1000, time), retryBaseMs: 1, retryMaxMs: 30_000 });
    server.enqueue({ status: 429, headers: { "retry-after": "20" }, body: { code: "API_REQUEST_QUOTA_EXCEEDED", title: "Too Many Requests", message: "Request quota exceeded. (type:RPS, quotas:50)" } });
    server.setDefault({ body: s.list(s.eventLog) });
    const page = await client.accountEventLogs({ accountAddress: s.TOKEN });
    expect(page.results).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    // 20 s on the limiter's clock (a timer of 20 s would have outlasted the test's timeout).
    expect(time.wakes).toEqual([30_000]);
    // And the next request of any caller comes after it, at the halved rate (a 429 that is
    // not the daily quota's also slows the limiter: 2 ms apart instead of 1).
    await client.accountEventLogs({ accountAddress: s.TOKEN });
    expect(time.wakes).toEqual([30_000, 30_002]);
  });
});
