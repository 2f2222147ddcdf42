import { join } from "node:path";
import { Script } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { SinkError, type Delivery, type Sink } from "../../src/notify/sink.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { CONTENT_SECURITY_POLICY } from "../../src/status/page/page-files.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * What the status page stands on, without a browser (so it runs everywhere): the page and
 * its two files with their security headers, the latest alerts, dead letters and credit
 * samples in /status, and the re-queue endpoint that exists only with a token and needs it.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TOKEN = "page-server-token-77aa";
const EXPLORER = "https://explorer.example/";

/** A sink that refuses every alert for good until `accept` is set; records what it accepted. */
function switchableSink(name: string): Sink & { accept: boolean; accepted: Delivery[] } {
  const sink = {
    name,
    type: "test",
    accept: false,
    accepted: [] as Delivery[],
    async send(delivery: Delivery) {
      if (!sink.accept) throw new SinkError("KW_NOTIFY_HTTP", "the receiver answered HTTP 400 (bad request)", { permanent: true });
      sink.accepted.push(delivery);
    },
  };
  return sink;
}

async function start(options: { token?: boolean; trustLoopback?: boolean } = {}): Promise<{ sim: Simulator; daemon: Daemon; url: string; hook: ReturnType<typeof switchableSink> }> {
  const sim = await createSimulator({ initialBlocks: 10, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  cleanups.push(() => sim.close());
  const dir = tempDir();
  const hook = switchableSink("hook");
  const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0, daily_credit_budget: 90000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0, explorer_url: "${EXPLORER}" }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: "127.0.0.1:0"${options.token ? `, token: ${TOKEN}` : ""}${options.trustLoopback ? ", trust_loopback: true" : ""} }
defaults: { schedule: "* * * * * *", start: ${sim.head()}, jitter: 0s }
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [internal_transactions] }
rules:
  - { name: calls, watch: wallet, summary: "call to {{to}}", notify: [hook] }
sinks:
  hook: { type: webhook, url: "https://hooks.example/x" }
`);
  const daemon = await createDaemon(quietCommon(), { config, sinks: { hook } });
  cleanups.push(async () => {
    await daemon.stop();
    dir.remove();
  });
  await daemon.start();
  return { sim, daemon, url: daemon.statusUrl()!, hook };
}

interface StatusBody {
  alerts: Array<{ id: string; block: number; rule: string; summary: string; links: { block?: string; transaction?: string }; deliveries: Array<{ sink: string; state: string; error: string | null }> }>;
  dead_letters: Array<{ id: string; alert_id: string; reason: string }>;
  dead_letters_total: number;
  credits: { spent_today: number; history: Array<{ at: string; spent: number }> };
  actions: { requeue_dead_letters: boolean };
}

const statusOf = async (url: string, token?: string) => (await (await fetch(`${url}/status`, { headers: token ? { authorization: `Bearer ${token}` } : {} })).json()) as StatusBody;

function addCalls(sim: Simulator, count: number): number {
  return sim.addBlock({ internalTransactions: Array.from({ length: count }, (_, i) => ({ from: sim.addresses.busyWallet, to: sim.addresses.contracts[i % sim.addresses.contracts.length], amount: "1" })) });
}

const requeue = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/api/dead-letters/requeue`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

describe("the status page's server side", () => {
  it("serves the page, its script and its style with a CSP that allows nothing inline or foreign; the script parses", async () => {
    const { url } = await start();
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toMatch(/default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'/);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe|https?:|\*/);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await page.text();
    // Every script comes from this server, none is inline, and nothing is loaded from elsewhere.
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/assets/app.js" defer>']);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);

    const script = await fetch(`${url}/assets/app.js`);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const code = await script.text();
    expect(() => new Script(code, { filename: "app.js" })).not.toThrow();
    expect(code).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
    const style = await fetch(`${url}/assets/app.css`);
    expect(style.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await style.text()).toContain(":root");
    // The JSON endpoints carry the same headers; the page needs no token, the data does.
    expect((await fetch(`${url}/status`)).headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
    expect((await fetch(`${url}/`, { method: "POST" })).status).toBe(405);
  });

  it("/status lists the latest alerts newest first with links we built, dead letters with their reason, and today's credit samples", async () => {
    const { sim, url } = await start({ trustLoopback: true });
    const older = addCalls(sim, 2);
    await waitFor(async () => (await statusOf(url)).alerts.length === 2, 15_000, "two alerts in /status");
    const newer = addCalls(sim, 1);
    await waitFor(async () => (await statusOf(url)).dead_letters_total === 3, 15_000, "three dead letters in /status");
    const body = await statusOf(url);
    expect(body.alerts.map((a) => a.block)).toEqual([newer, older, older]);
    const first = body.alerts[0]!;
    expect(first.rule).toBe("calls");
    expect(first.summary).toMatch(/^call to 0x[0-9a-f]{40}$/);
    expect(first.links.block).toBe(`https://explorer.example/block/${newer}`);
    expect(first.links.transaction).toMatch(/^https:\/\/explorer\.example\/tx\/0x[0-9a-f]{64}$/);
    expect(first.deliveries).toEqual([{ sink: "hook", entry_id: `${first.id}:hook`, state: "dead", attempts: 1, error: expect.stringContaining("HTTP 400") }]);
    expect(body.dead_letters.map((d) => d.alert_id)).toEqual(body.alerts.map((a) => a.id));
    expect(body.dead_letters[0]!.reason).toBe("permanent error: KW_NOTIFY_HTTP: the receiver answered HTTP 400 (bad request)");
    expect(body.actions.requeue_dead_letters).toBe(false);
    // The credit series: today's samples, oldest first, ending with the meter now.
    expect(body.credits.history.length).toBeGreaterThanOrEqual(2);
    expect(body.credits.history.at(-1)!.spent).toBe(body.credits.spent_today);
    const times = body.credits.history.map((s) => Date.parse(s.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(body.credits.history.every((s, i, all) => i === 0 || s.spent >= all[i - 1]!.spent)).toBe(true);

    // With status.trust_loopback and no token the write API answers loopback peers, and only
    // to JSON: a form another web page could post (text/plain) is refused before it is read.
    expect((await requeue(url, '{"all":true}', { "content-type": "text/plain" })).status).toBe(415);
    expect((await statusOf(url)).dead_letters_total).toBe(body.dead_letters_total);
    expect(await (await requeue(url, '{"all":true}')).json()).toEqual({ requeued: body.dead_letters_total, unmatched: [] });
  });

  it("with status.token, re-queues dead letters only for a request that carries it, and checks what it is asked", async () => {
    const { sim, daemon, url, hook } = await start({ token: true });
    addCalls(sim, 2);
    await waitFor(async () => (await statusOf(url, TOKEN)).dead_letters_total === 2, 15_000, "two dead letters in /status");
    const body = await statusOf(url, TOKEN);
    expect(body.actions.requeue_dead_letters).toBe(true);
    const [one, two] = body.dead_letters;

    expect((await requeue(url, '{"all":true}')).status).toBe(401);
    expect((await requeue(url, '{"all":true}', { authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    expect((await fetch(`${url}/api/dead-letters/requeue`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await requeue(url, '{"all":true}', { ...auth, "content-type": "text/plain" })).status).toBe(415);
    for (const bad of ["{", "[]", '{"all":false}', '{"ids":[]}', '{"ids":[1]}', '{"ids":["a"],"all":true}', JSON.stringify({ ids: ["x".repeat(301)] })]) {
      const answer = await requeue(url, bad, auth);
      expect(answer.status, bad).toBe(400);
      expect(((await answer.json()) as { error: string }).error.length).toBeGreaterThan(0);
    }
    expect((await requeue(url, JSON.stringify({ ids: ["x".repeat(70_000)] }), auth)).status).toBe(413);
    // Nothing was re-queued by any of that.
    expect((await daemon.store.listOutbox({ state: "dead" })).length).toBe(2);
    expect(hook.accepted).toEqual([]);

    hook.accept = true;
    const answer = await requeue(url, JSON.stringify({ ids: [one!.id, "kw_unknown"] }), auth);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ requeued: 1, unmatched: ["kw_unknown"] });
    await waitFor(() => hook.accepted.length === 1, 15_000, "the daemon to deliver one alert");
    expect(hook.accepted[0]!.id).toBe(one!.alert_id);
    expect((await daemon.store.listOutbox({ state: "dead" })).map((e) => e.id)).toEqual([two!.id]);

    expect(await (await requeue(url, '{"all":true}', auth)).json()).toEqual({ requeued: 1, unmatched: [] });
    await waitFor(() => hook.accepted.length === 2, 15_000, "the daemon to deliver two alerts");
    expect((await statusOf(url, TOKEN)).dead_letters_total).toBe(0);
  });
});
