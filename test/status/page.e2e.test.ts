import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { HOSTILE_STRINGS } from "../../src/simulator/hostile.js";
import { WRITE_TOKEN_FILE_NAME } from "../../src/config/schema.js";
import { CONTENT_SECURITY_POLICY } from "../../src/status/page/page-files.js";
import { browserContext, CHROMIUM, HAS_CHROMIUM, type SharedContext } from "../helpers/browser.js";
import { startKaiawatch, waitFor, type Child } from "../helpers/child.js";
import { tempDir } from "../helpers/harness.js";
import { startReceiver, type Receiver } from "../notify/receiver.js";

/**
 * The status page in a real browser (Debian's chromium, headless) against `kaiawatch run` as
 * a child process and the hostile simulator: every source with its cursor, a new alert
 * within seconds of its block, on-chain markup shown as text and never run, and dead letters
 * re-queued from the page only with the status token. Skipped, with a message, where
 * /usr/bin/chromium is not installed (`.ci/run` installs it).
 */
if (!HAS_CHROMIUM) console.warn(`SKIPPED test/status/page.e2e.test.ts: ${CHROMIUM} is missing (apt-get install -y chromium); the status page was not tested in a browser`);

const EXPLORER = "https://kaiascan.example";
const TOKEN = "page-e2e-token-4b1d9c";
const SCREENSHOTS = join(process.cwd(), "test-results");
/** Text that would run if the page ever parsed on-chain text as HTML. */
const MARKUP = HOSTILE_STRINGS[1]!; // <script>alert(1)</script><img src=x onerror=alert(2)>
const FLAG_MARKUP = `<img src=x onerror="window.__kwPwned=1"><svg onload="window.__kwPwned=2">`;
const BIDI = HOSTILE_STRINGS[3]!; // invoice\u202Egnp.exe

let sim: Simulator;
let receiver: Receiver;
let shared: SharedContext | undefined;
let context: BrowserContext;
const dir = tempDir("kaiawatch-page-e2e-");
/** What the webhook receiver answers: 400 makes a dead letter at once (a permanent error). */
let hookStatus = 400;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  // No generated internal transactions: the only failed calls are the ones the test adds.
  sim = await createSimulator({ seed: 11, hostile: true, initialBlocks: 20, density: { eventLogs: 1, nftTransfers: 0, internalTransactions: 0 } });
  receiver = await startReceiver((res) => {
    res.writeHead(hookStatus, { "content-type": "text/plain" });
    res.end(hookStatus === 200 ? "ok" : "bad request");
  });
  shared = await browserContext({ viewport: { width: 1280, height: 1000 } });
  context = shared.context;
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 30_000);

afterAll(async () => {
  await shared?.close();
  await receiver?.close();
  await sim?.close();
  dir.remove();
});

function start(name: string, token: boolean): Child {
  const configPath = join(dir.path, `${name}.yaml`);
  writeFileSync(
    configPath,
    `
explorer: { base_url: "${sim.url}", requests_per_second: 500, daily_credit_budget: 500000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, explorer_url: "${EXPLORER}" }
store: { path: "${join(dir.path, `${name}.json`)}" }
status: { listen: "127.0.0.1:0"${token ? `, token: ${TOKEN}` : ""} }
defaults: { schedule: "* * * * * *", start: ${sim.head() - 5}, jitter: 0s }
# via: own keeps this page test about the page: each watch on its own source, one row and
# one cursor each. On FREE the planner would read the wallet through operation 8 (shared,
# one request per block, with the wallet's position kept apart), which other tests cover.
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [internal_transactions], via: own }
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: failed-calls, watch: wallet, when: { status: Fail }, summary: "Failed: {{fail_message}}", notify: [hook, file] }
  - { name: token-logs, watch: token, notify: [file] }
sinks:
  hook: { type: webhook, url: "${receiver.url}/hook", allow_http: true }
  file: { type: file, path: "${join(dir.path, `${name}-alerts.jsonl`)}" }
`,
  );
  return startKaiawatch(["run", "--config", configPath, "--log-format", "json"]);
}

async function statusUrlOf(child: Child): Promise<string> {
  let url: string | undefined;
  await waitFor(
    () => {
      const line = child.stderr().split("\n").find((l) => l.includes("status server listening"));
      if (line) url = (JSON.parse(line) as { url: string }).url;
      return url !== undefined || child.process.exitCode !== null;
    },
    20_000,
    "the status server",
  );
  if (url === undefined) throw new Error(`kaiawatch run exited: ${child.stderr()}`);
  return url;
}

async function stop(child: Child): Promise<void> {
  child.process.kill("SIGTERM");
  expect((await child.exited).code).toBe(0);
}

const numberIn = (text: string | null) => Number((text ?? "").replace(/,/g, ""));

/** Waits until every source row shows the simulator's head as its cursor; returns the keys shown. */
async function sourcesAtHead(page: Page): Promise<string[]> {
  const rows = page.locator("#sources-body tr");
  await waitFor(async () => {
    const cursors = (await rows.locator("td.cursor").allTextContents()).map(numberIn);
    return cursors.length === 2 && cursors.every((cursor) => cursor === sim.head());
  }, 20_000, "both cursors on the page at the head");
  return rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-source-key") ?? ""));
}

describe.skipIf(!HAS_CHROMIUM)("the status page in headless Chromium", () => {
  it("shows every source and cursor, a new alert within seconds, hostile text as inert text; read-only without a token", async () => {
    const child = start("open", false);
    const page = await context.newPage();
    const dialogs: string[] = [];
    const consoleErrors: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    page.on("pageerror", (error) => consoleErrors.push(`page error: ${error.message}`));
    try {
      const url = await statusUrlOf(child);
      const response = await page.goto(`${url}/`);
      expect(response?.status()).toBe(200);
      const headers = response!.headers();
      expect(headers["content-security-policy"]).toBe(CONTENT_SECURITY_POLICY);
      expect(headers["x-content-type-options"]).toBe("nosniff");
      expect(headers["referrer-policy"]).toBe("no-referrer");
      expect(headers["content-type"]).toBe("text/html; charset=utf-8");
      const script = await fetch(`${url}/assets/app.js`);
      expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(script.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);

      // Every source of the plan, each with the store's cursor (the head: the sim is frozen).
      const status = (await (await fetch(`${url}/status`)).json()) as { sources: Array<{ key: string }>; actions: { requeue_dead_letters: boolean } };
      expect(status.actions.requeue_dead_letters).toBe(false);
      expect((await sourcesAtHead(page)).sort()).toEqual(status.sources.map((s) => s.key).sort());
      await waitFor(async () => (await page.locator("#readiness").textContent()) === "ready", 10_000, "the page to show ready");

      // A block with failed calls whose revert messages are markup and a bidi override.
      const block = sim.addBlock({
        internalTransactions: [MARKUP, FLAG_MARKUP, BIDI].map((message) => ({
          from: sim.addresses.busyWallet,
          to: sim.addresses.contracts[0],
          amount: "0",
          error: "execution reverted",
          transaction_status: { status: "Fail" as const, fail_message: message },
        })),
      });
      const produced = Date.now();
      const alerts = page.locator(`#alerts-list li[data-block="${block}"]`);
      await waitFor(async () => (await alerts.count()) === 3, 15_000, "the block's three alerts on the page");
      console.log(`status page: the block's alerts appeared ${Date.now() - produced} ms after the simulator produced block ${block}`);

      const summaries = await alerts.locator(".alert-summary").allTextContents();
      expect(summaries).toContain(`Failed: ${MARKUP}`);
      expect(summaries).toContain(`Failed: ${FLAG_MARKUP}`);
      expect(summaries).toContain("Failed: invoice[U+202E]gnp.exe");
      // Shown as text: no element came out of it, nothing ran.
      expect(await page.locator("#alerts-list img, #alerts-list script, #alerts-list svg").count()).toBe(0);
      expect(await page.evaluate("typeof window.__kwPwned")).toBe("undefined");
      expect(dialogs).toEqual([]);

      // Links only to the explorer we configured, built from the block number and the hash,
      // to the page's own paths, or to an alert's history view on this page (#alert=ID) and back (#).
      const first = alerts.first();
      expect(await first.locator("a", { hasText: `block ${block}` }).getAttribute("href")).toBe(`${EXPLORER}/block/${block}`);
      const hrefs = await page.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
      for (const href of hrefs) expect(href.startsWith(`${EXPLORER}/`) || /^\/[a-z]+$/.test(href) || /^#(alert=kw_[0-9a-f]+)?$/.test(href), href).toBe(true);
      expect(hrefs.some((href) => /^https:\/\/kaiascan\.example\/tx\/0x[0-9a-f]{64}$/.test(href))).toBe(true);

      // The webhook answered 400: dead letters, shown with their reason, but read-only here.
      const deadRows = page.locator("#dead-body tr");
      await waitFor(async () => (await deadRows.count()) === 3, 15_000, "three dead letters on the page");
      expect(await deadRows.first().locator("td.error").textContent()).toContain("400");
      expect(await page.locator("#sinks-body tr[data-sink=hook] td.dead").textContent()).toBe("3");
      expect(await page.locator("#requeue-note").textContent()).toContain("Read-only");
      expect(await page.locator("button.requeue").count()).toBe(0);
      expect(await page.locator("#requeue-all").isVisible()).toBe(false);
      // No token configured: the page offers no re-queue. A write needs the token the daemon
      // made at its start (status.write_token_file, beside the store): without it, or with
      // another, 401; and a body another web page could post (text/plain, no CORS preflight)
      // is refused even with it. The CLI's JSON with the file's token is what gets in.
      for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }] as Array<Record<string, string>>) {
        const answer = await fetch(`${url}/api/dead-letters/requeue`, { method: "POST", headers: { ...headers, "content-type": "text/plain" }, body: '{"all":true}' });
        expect(answer.status).toBe(401);
      }
      const writeToken = readFileSync(join(dir.path, WRITE_TOKEN_FILE_NAME), "utf8").trim();
      const plain = await fetch(`${url}/api/dead-letters/requeue`, { method: "POST", headers: { authorization: `Bearer ${writeToken}`, "content-type": "text/plain" }, body: '{"all":true}' });
      expect(plain.status).toBe(415);
      expect(((await (await fetch(`${url}/status`)).json()) as { dead_letters_total: number }).dead_letters_total).toBe(3);

      // The credit chart and the API requests, from the same meter as /status.
      expect(await page.locator("#credits-chart svg polyline.spent").count()).toBe(1);
      expect(await page.locator("#credits-summary").textContent()).toMatch(/ of 500,000 credits/);
      expect(numberIn(await page.locator("#requests-body tr[data-operation=accountInternalTransactions] td").nth(1).textContent())).toBeGreaterThan(0);

      await page.screenshot({ path: join(SCREENSHOTS, "status-page-hostile.png"), fullPage: true });
      expect(consoleErrors).toEqual([]);
    } finally {
      await page.close();
      await stop(child);
    }
  }, 60_000);

  it("re-queues a dead letter from the page with the token, and not without it", async () => {
    hookStatus = 400;
    const child = start("guarded", true);
    const page = await context.newPage();
    try {
      const url = await statusUrlOf(child);
      await page.goto(`${url}/`);
      // Without the token the page shows nothing but the token form.
      await page.locator("#token-panel").waitFor({ state: "visible", timeout: 10_000 });
      expect(await page.locator("#content").isVisible()).toBe(false);
      await page.fill("#token-input", "not-the-token");
      await page.click("#token-submit");
      await waitFor(async () => (await page.locator("#token-message").textContent()) === "That token was refused.", 10_000, "the page to refuse the token");
      expect(await page.locator("#content").isVisible()).toBe(false);
      await page.fill("#token-input", TOKEN);
      await page.click("#token-submit");
      await sourcesAtHead(page);
      expect(await page.evaluate("sessionStorage.getItem('kaiawatch.status.token')")).toBe(TOKEN);

      const block = sim.addBlock({
        internalTransactions: [{ from: sim.addresses.busyWallet, to: sim.addresses.contracts[1], amount: "0", error: "execution reverted", transaction_status: { status: "Fail" as const, fail_message: "slippage" } }],
      });
      const deadRow = page.locator("#dead-body tr").filter({ hasText: "slippage" });
      await deadRow.waitFor({ state: "visible", timeout: 15_000 });
      const entryId = await deadRow.getAttribute("data-entry-id");
      expect(entryId).toMatch(/^kw_[0-9a-f]{32}:hook$/);
      const id = entryId!.slice(0, -":hook".length);
      expect(await page.locator(`#alerts-list li[data-block="${block}"]`).getAttribute("data-alert-id")).toBe(id);

      // Without the token, or with a wrong one, the server refuses and nothing moves.
      for (const headers of [{}, { authorization: "Bearer not-the-token" }] as Array<Record<string, string>>) {
        const answer = await fetch(`${url}/api/dead-letters/requeue`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ ids: [entryId] }) });
        expect(answer.status).toBe(401);
      }
      const auth = { authorization: `Bearer ${TOKEN}` };
      const deadIds = async () => ((await (await fetch(`${url}/status`, { headers: auth })).json()) as { dead_letters: Array<{ id: string }> }).dead_letters.map((d) => d.id);
      expect(await deadIds()).toContain(entryId);
      const before = receiver.requests.filter((r) => r.headers["webhook-id"] === id).length;
      expect(before).toBe(1);

      // The receiver is fixed; the operator re-queues from the page, with the token it holds.
      hookStatus = 200;
      await deadRow.locator("button.requeue").click();
      await waitFor(async () => (await page.locator("#requeue-message").textContent()) === "1 dead letter re-queued.", 10_000, "the page to confirm the re-queue");
      await waitFor(() => receiver.requests.filter((r) => r.headers["webhook-id"] === id).length === 2, 15_000, "the re-queued alert at the receiver");
      await page.locator(`#alerts-list li[data-alert-id="${id}"] .badge`, { hasText: "hook: delivered" }).waitFor({ timeout: 10_000 });
      await waitFor(async () => (await page.locator("#dead-body tr").filter({ hasText: "slippage" }).count()) === 0, 10_000, "the re-queued dead letter gone from the page");
      expect(await deadIds()).not.toContain(entryId);

      await page.screenshot({ path: join(SCREENSHOTS, "status-page.png"), fullPage: true });
    } finally {
      await page.close();
      await stop(child);
    }
  }, 60_000);
});
