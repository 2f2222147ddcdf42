import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createDispatcher } from "../../src/notify/dispatcher.js";
import { createWebhookSink } from "../../src/notify/sinks/webhook.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { browserContext, CHROMIUM, HAS_CHROMIUM } from "../helpers/browser.js";
import { freePort } from "../helpers/free-port.js";
import { configFromText, memoryIO, quietCommon } from "../helpers/harness.js";
import { commit, createEnv, entry, type TestEnv } from "../notify/dispatcher-fixtures.js";
import { startReceiver, type Receiver } from "../notify/receiver.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * One alert's delivery history where an operator reads it while the daemon runs: GET
 * /api/history behind the status token, `kaiawatch history` asking the running daemon, and
 * the status page's view of one alert (#alert=ID) in headless Chromium. The attempts are
 * made first by a dispatcher on an injected clock (a real receiver refuses twice, then
 * accepts); the daemon then runs on that store. The browser part is skipped, with a message,
 * where /usr/bin/chromium is missing.
 */
if (!HAS_CHROMIUM) console.warn(`SKIPPED the browser part of test/status/page-history.e2e.test.ts: ${CHROMIUM} is missing`);

const TOKEN = "history-page-token-9f3e";
const MINUTE = 60_000;

let env: TestEnv;
let receiver: Receiver;
let sim: Simulator;
let daemon: Daemon;
let url: string;
let configPath: string;

beforeAll(async () => {
  env = await createEnv();
  const seen = new Map<string, number>();
  receiver = await startReceiver((res, req) => {
    const id = String(req.headers["webhook-id"]);
    seen.set(id, (seen.get(id) ?? 0) + 1);
    res.statusCode = seen.get(id)! <= 2 ? 503 : 200;
    res.end(res.statusCode === 200 ? "ok" : "busy <b>now</b>");
  });
  const hook = createWebhookSink(env.common, "hook", { url: `${receiver.url}/in`, headers: {}, timeout: 5_000, allow_http: true });
  await commit(env.store, [entry("a1", "hook", "calls")]);
  const dispatcher = createDispatcher(env.common, { store: env.store, rules: [], sinks: [{ sink: hook, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }], backoff: { baseMs: MINUTE, maxMs: MINUTE }, random: () => 1 });
  for (let round = 0; round < 3; round++) {
    env.clock.offsetMs = round * (MINUTE + 1_000);
    await dispatcher.drain({ timeoutMs: 5_000 });
  }
  await env.store.close();

  sim = await createSimulator({ initialBlocks: 10, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  const port = await freePort();
  const text = `
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0, daily_credit_budget: 90000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${JSON.stringify(env.path)} }
status: { listen: "127.0.0.1:${port}", token: ${TOKEN} }
defaults: { schedule: "* * * * * *", start: ${sim.head()}, jitter: 0s }
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [internal_transactions] }
rules:
  - { name: calls, watch: wallet, notify: [hook] }
sinks:
  hook: { type: webhook, url: "${receiver.url}/in", allow_http: true }
`;
  configPath = join(env.dir, "config.yaml");
  writeFileSync(configPath, text);
  daemon = await createDaemon(quietCommon(), { config: configFromText(text) });
  await daemon.start();
  url = daemon.statusUrl()!;
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  await sim?.close();
  await receiver?.close();
  await env?.cleanup();
});

describe("one alert's delivery history on a running daemon", () => {
  it("is read through GET /api/history with the status token, and by kaiawatch history through the daemon", async () => {
    const read = (query: string, token?: string) => fetch(`${url}/api/history${query}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
    expect((await read("?alert=a1")).status).toBe(401);
    expect((await read("?outcome=lost", TOKEN)).status).toBe(400);
    expect((await read("?alert=a1&color=red", TOKEN)).status).toBe(400);
    const answer = (await (await read("?alert=a1", TOKEN)).json()) as { attempts: Array<{ attempt: number; outcome: string; status?: number; error?: string }> };
    expect(answer.attempts.map((a) => [a.attempt, a.outcome, a.status])).toEqual([
      [3, "delivered", 200],
      [2, "failed", 503],
      [1, "failed", 503],
    ]);

    // The daemon holds the store: the command asks it, with the config's token.
    const io = memoryIO();
    expect(await main(["history", "--config", configPath, "--alert", "a1"], io)).toBe(0);
    const lines = io.out().trim().split("\n");
    expect(lines.slice(1, 4).map((line) => line.split(/\s{2,}/).slice(4, 7))).toEqual([
      ["1", "failed", "503"],
      ["2", "failed", "503"],
      ["3", "delivered", "200"],
    ]);
    expect(lines.at(-1)).toBe(`3 attempts, read from the running daemon at ${url}`);
  });

  it.skipIf(!HAS_CHROMIUM)("shows every attempt on the page of the alert, reached from the latest alerts", async () => {
    const shared = await browserContext();
    try {
      const page = await shared.context.newPage();
      await page.goto(`${url}/`);
      await page.locator("#token-input").fill(TOKEN);
      await page.locator("#token-submit").click();
      await page.locator('#alerts-list li[data-alert-id="a1"] a.history-link').click();
      expect(new URL(page.url()).hash).toBe("#alert=a1");
      const rows = page.locator("#alert-history-body tr");
      await waitFor(async () => (await rows.count()) === 3, 10_000, "the alert's three history rows");
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-outcome")))).toEqual(["failed", "failed", "delivered"]);
      expect(await rows.locator("td:nth-child(5)").allTextContents()).toEqual(["503", "503", "200"]);
      // The receiver's markup is text, never parsed.
      expect(await rows.first().locator("td.error").textContent()).toContain("busy <b>now</b>");
      expect(await page.locator("#alert-history-body b").count()).toBe(0);
      expect(await page.locator("#alert-history-count").textContent()).toBe("(3 attempts)");
      await page.locator("#alert-detail-close").click();
      await waitFor(() => page.locator("#alert-detail").isHidden(), 10_000, "the alert's detail to close");
    } finally {
      await shared.close();
    }
  });
});
