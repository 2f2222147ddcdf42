import { execFileSync } from "node:child_process";
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Common } from "../../src/common/common.js";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";
import { sample } from "../helpers/metric-sample.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * The status server of a daemon running in-process against the simulator: what each
 * endpoint answers, the bearer token, and readiness following the store, the head and the
 * ticks as they really change.
 */
const cleanups: Array<() => Promise<void> | void> = [];
const canMount = (() => {
  const probe = tempDir();
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe.path], { stdio: "ignore" });
    execFileSync("umount", [probe.path], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    probe.remove();
  }
})();
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TOKEN = "status-token-0123456789";

interface Started {
  sim: Simulator;
  common: Common;
  daemon: Daemon;
  url: string;
  storePath: string;
}

async function start(options: { token?: boolean; listen?: string; rpcUrl?: string; storeDir?: string } = {}): Promise<Started> {
  const sim = await createSimulator({ initialBlocks: 20 });
  cleanups.push(() => sim.close());
  const dir = tempDir();
  const storePath = join(options.storeDir ?? dir.path, "store.json");
  const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0 }
chain: { rpc_url: ${options.rpcUrl ?? sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${storePath} }
status: { listen: "${options.listen ?? "127.0.0.1:0"}"${options.token ? `, token: ${TOKEN}` : ""} }
# Failing reads turn /readyz to 503 after this long (the default, 2m, is too long for a test).
operational: { source_failing_after: 1s }
defaults: { schedule: "* * * * * *", start: ${sim.head() - 10}, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
  - { name: wallet, account: "${sim.addresses.busyWallet}" }
rules:
  - { name: token-logs, watch: token, notify: [out] }
  - { name: wallet-nfts, watch: wallet, notify: [out] }
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`);
  const common = quietCommon();
  const daemon = await createDaemon(common, { config });
  cleanups.push(async () => {
    await daemon.stop();
    dir.remove();
  });
  await daemon.start();
  return { sim, common, daemon, url: daemon.statusUrl()!, storePath };
}

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });
const json = async (url: string, headers: Record<string, string> = {}) => (await (await get(url, headers)).json()) as Record<string, unknown>;


/** Every source has finished a tick successfully. */
async function everySourceTicked(url: string): Promise<void> {
  await waitFor(async () => ((await json(`${url}/status`)).sources as Array<{ last_ok_at: string | null }>).every((s) => s.last_ok_at !== null), 10_000, "a successful tick of every source in /status");
}

async function readyWithin(url: string, timeoutMs: number): Promise<void> {
  await waitFor(async () => (await get(`${url}/readyz`)).status === 200, timeoutMs, "/readyz to answer 200").catch(async (error: unknown) => {
    throw new Error(`${(error as Error).message}; it says ${JSON.stringify(await json(`${url}/readyz`))}`);
  });
}

describe("status server", () => {
  it("/healthz answers at once, /readyz once the first tick reached the head, and /metrics and /status show the same cursors as the store", async () => {
    const { sim, common, daemon, url } = await start();
    expect((await get(`${url}/healthz`)).status).toBe(200);
    // Before the first head read: not ready, and says why.
    const early = await get(`${url}/readyz`);
    if (early.status === 503) expect(((await early.json()) as { reasons: string[] }).reasons.join(" ")).toMatch(/head/);

    await readyWithin(url, 10_000);
    await everySourceTicked(url);
    const status = await json(`${url}/status`);
    const sources = status.sources as Array<{ key: string; watch: string; cursor: number; lag: number; last_outcome: string }>;
    expect(sources.map((s) => s.watch).sort()).toEqual(["token", "wallet"]);
    for (const source of sources) {
      expect(source.cursor).toBe((await daemon.store.getCursor(source.key))?.block);
      expect(source.last_outcome).toBe("ok");
    }
    const credits = status.credits as { spent_today: number; by_operation: Record<string, number> };
    expect(credits.spent_today).toBe(daemon.client.meter.spentToday());
    expect(credits.spent_today).toBeGreaterThan(0);
    const requests = status.requests as Record<string, Record<string, number>>;
    expect(requests.accountEventLogs?.["200"]).toBeGreaterThan(0);
    expect(Object.keys(status.sinks as object)).toEqual(["out"]);
    expect((status.store as { path: string }).path).toBe(daemon.store.path);

    // The daemon goes on writing during the scrape (ticks, deliveries, its credit meter), and
    // the gauge holds the size after the last write before it is read out: one of the sizes
    // the gauge had from just before the scrape to its end, however many writes came between.
    const storeSizes = [(await common.metrics.storeSize.get()).values[0]!.value];
    const setSize = vi.spyOn(common.metrics.storeSize, "set");
    const metrics = await (await get(`${url}/metrics`)).text();
    storeSizes.push(...setSize.mock.calls.map((args) => args.at(-1) as number));
    setSize.mockRestore();
    for (const source of sources) {
      const cursor = sample(metrics, "kaiawatch_source_cursor_block", { source: source.key });
      expect(cursor).toBe((await daemon.store.getCursor(source.key))?.block);
      // Each source's last tick duration; the distribution is per record family, not per source.
      expect(sample(metrics, "kaiawatch_source_last_tick_duration_seconds", { source: source.key })).toBeGreaterThan(0);
      expect(sample(metrics, "kaiawatch_source_tick_duration_seconds_count", { family: daemon.plan.sources.find((s) => s.key === source.key)!.family })).toBeGreaterThan(0);
    }
    expect(metrics).not.toMatch(/kaiawatch_source_tick_duration_seconds_bucket\{[^}]*source=/);
    // Requests counted per operation and status, credits against the simulator's own counter.
    expect(sample(metrics, "kaiawatch_explorer_requests_total", { operation: "accountEventLogs", status: "200" })).toBe(sim.stats().requests.accountEventLogs?.["200"]);
    const simCredits = sim.stats().creditsTotal;
    expect(sample(metrics, "kaiawatch_explorer_credits_today")).toBeGreaterThan(0);
    expect(sample(metrics, "kaiawatch_explorer_credits_today")).toBeLessThanOrEqual(simCredits);
    const alerts = (await daemon.store.listOutbox({ sink: "out" })).length;
    expect(alerts).toBeGreaterThan(0);
    expect(sample(metrics, "kaiawatch_alerts_queued_total", { sink: "out" })).toBeGreaterThanOrEqual(alerts);
    expect(storeSizes).toContain(sample(metrics, "kaiawatch_store_size_bytes"));
    expect(storeSizes.every((size) => size > 0)).toBe(true);
    expect(sample(metrics, "kaiawatch_source_ticks_total", { watch: "token", outcome: "ok" })).toBeGreaterThan(0);
    expect(metrics).toContain("kaiawatch_store_write_duration_seconds_count");
  });

  it("needs the bearer token for /metrics and /status when status.token is set; the probes stay open", async () => {
    const { url } = await start({ token: true });
    for (const path of ["/metrics", "/status"]) {
      expect((await get(`${url}${path}`)).status).toBe(401);
      expect((await get(`${url}${path}`, { authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
      expect((await get(`${url}${path}`, { authorization: `Bearer ${TOKEN.slice(0, -1)}` })).status).toBe(401);
      expect((await get(`${url}${path}`, { authorization: TOKEN })).status).toBe(401);
      expect((await get(`${url}${path}`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    }
    expect((await get(`${url}/healthz`)).status).toBe(200);
    expect([200, 503]).toContain((await get(`${url}/readyz`)).status);
    expect((await get(`${url}/nothing`)).status).toBe(404);
    expect((await fetch(`${url}/status`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
  });

  // A full disk (a tiny tmpfs filled up) is what makes SQLite's writes fail: needs root.
  it.skipIf(!canMount)("is not ready while store writes fail, and ready again once they succeed", async () => {
    const mount = tempDir();
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mount.path], { stdio: "ignore" });
    cleanups.push(() => {
      execFileSync("umount", [mount.path], { stdio: "ignore" });
      mount.remove();
    });
    const { url, sim } = await start({ storeDir: mount.path });
    await readyWithin(url, 10_000);
    const filler = join(mount.path, "filler");
    // New blocks keep the daemon writing; a checkpoint may free a page now and then: top up.
    const fillUp = () => {
      const fd = openSync(filler, "a");
      try {
        for (;;) writeSync(fd, Buffer.alloc(4096, 1));
      } catch {
        // ENOSPC: full.
      } finally {
        closeSync(fd);
      }
    };
    let body: { ready: boolean; checks: { store: { ok: boolean; detail: string } } } | undefined;
    await waitFor(async () => {
      fillUp();
      sim.mine(3);
      const res = await get(`${url}/readyz`);
      body = (await res.json()) as typeof body;
      return res.status === 503 && body?.checks.store.ok === false;
    }, 10_000, "/readyz to report the full store");
    expect(body?.checks.store.ok).toBe(false);
    expect(body?.checks.store.detail).toMatch(/failed/);
    rmSync(filler);
    await readyWithin(url, 10_000);
  });

  it("is not ready when the chain head cannot be read", async () => {
    // A port where nothing listens.
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => resolve(port));
      });
    });
    const { url } = await start({ rpcUrl: `http://127.0.0.1:${closed}` });
    let body: { ready: boolean; checks: { head: { ok: boolean; detail: string } } } | undefined;
    await waitFor(async () => {
      const res = await get(`${url}/readyz`);
      body = (await res.json()) as typeof body;
      return res.status === 503 && /unreachable/.test(body?.checks.head.detail ?? "");
    }, 15_000, "/readyz to report the node unreachable");
    expect(body?.ready).toBe(false);
    expect(body?.checks.head.detail).toMatch(/unreachable at the last read/);
  });

  it("refuses to start on a port in use with KW_STATUS_LISTEN naming the address", async () => {
    const blocker: Server = await new Promise((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => resolve(server));
    });
    cleanups.push(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as { port: number }).port;
    const error = await start({ listen: `127.0.0.1:${port}` }).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error?.code).toBe("KW_STATUS_LISTEN");
    expect(error?.message).toContain(`127.0.0.1:${port}`);
    expect(error?.message).toMatch(/in use/);
  });
});
