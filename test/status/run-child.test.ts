import { existsSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { readOnDisk } from "../store/fixtures/on-disk.js";
import { startKaiawatch, waitForStatusUrl } from "../helpers/child.js";
import { tempDir } from "../helpers/harness.js";
import { sample } from "../helpers/metric-sample.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * `kaiawatch run` as a real process against the simulator, read from outside through its
 * status server: the cursors in /status and /metrics are the store file's, credits and
 * requests are counted, and the token guards both. The simulator is frozen and mined by
 * the test, so every figure is compared while nothing moves.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-status-child-");
const TOKEN = "child-status-token-9f8e7d";
beforeAll(async () => {
  sim = await createSimulator({ seed: 7, initialBlocks: 40 });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

function writeConfig(name: string, listen: string): { configPath: string; storePath: string } {
  const storePath = join(dir.path, `${name}.json`);
  const configPath = join(dir.path, `${name}.yaml`);
  writeFileSync(
    configPath,
    `
explorer: { base_url: "${sim.url}", requests_per_second: 500, daily_credit_budget: 1000000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${storePath}" }
status: { listen: "${listen}", token: ${TOKEN} }
defaults: { schedule: "* * * * * *", start: ${sim.head() - 30}, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [nft_transfers] }
rules:
  - { name: token-logs, watch: token, notify: [out] }
  - { name: wallet-nfts, watch: wallet, notify: [out] }
sinks:
  out: { type: file, path: "${join(dir.path, `${name}-alerts.jsonl`)}" }
`,
  );
  return { configPath, storePath };
}

interface StatusBody {
  ready: boolean;
  head: { block: number };
  sources: Array<{ key: string; watch: string; cursor: number | null; lag: number | null; ticks: number }>;
  credits: { spent_today: number; budget: number; by_operation: Record<string, number> };
  requests: Record<string, Record<string, number>>;
  store: { path: string; writes: number };
}

describe("kaiawatch run's status server, from outside", () => {
  it("serves /metrics and /status whose cursors, credits and requests match the store file and the simulator", async () => {
    const { configPath, storePath } = writeConfig("main", "127.0.0.1:0");
    const child = startKaiawatch(["run", "--config", configPath, "--log-format", "json"]);
    const auth = { authorization: `Bearer ${TOKEN}` };
    try {
      const url = await waitForStatusUrl(child);
      const status = async () => (await (await fetch(`${url}/status`, { headers: auth })).json()) as StatusBody;
      let body = await status();
      const atHead = async () => {
        body = await status();
        // The file too: a window without alerts reaches the file with the firing's one write, just after.
        const onDisk = readOnDisk(storePath).cursors;
        return body.sources.length === 2 && body.sources.every((s) => s.cursor === sim.head() && onDisk[s.key]?.block === sim.head());
      };
      const until = (what: string) =>
        waitFor(atHead, 20_000, what).catch((error: unknown) => {
          throw new Error(`${(error as Error).message}: ${JSON.stringify(body)}`);
        });
      await until("the catch-up");
      sim.mine(5);
      await until("the five new blocks");

      // Nothing moves now: the chain is frozen at the cursors, so ticks ask the API nothing.
      body = await status();
      const metricsResponse = await fetch(`${url}/metrics`, { headers: auth });
      expect(metricsResponse.headers.get("content-type")).toContain("text/plain");
      const metrics = await metricsResponse.text();
      const store = readOnDisk(storePath);
      const simStats = sim.stats();

      expect(body.head.block).toBe(sim.head());
      expect(sample(metrics, "kaiawatch_head_block")).toBe(sim.head());
      for (const source of body.sources) {
        expect(source.cursor).toBe(store.cursors[source.key]?.block);
        expect(sample(metrics, "kaiawatch_source_cursor_block", { source: source.key })).toBe(store.cursors[source.key]?.block);
        expect(sample(metrics, "kaiawatch_source_lag_blocks", { source: source.key })).toBe(0);
        expect(source.ticks).toBeGreaterThan(0);
        expect(sample(metrics, "kaiawatch_source_ticks_total", { source: source.key, outcome: "ok" })).toBeGreaterThan(0);
      }
      // Credits: the daemon's meter, its metric and the simulator's own counter agree.
      expect(body.credits.spent_today).toBeGreaterThan(0);
      expect(body.credits.spent_today).toBe(simStats.creditsToday);
      expect(body.credits.budget).toBe(1_000_000);
      expect(sample(metrics, "kaiawatch_explorer_credits_today")).toBe(simStats.creditsToday);
      expect(sample(metrics, "kaiawatch_explorer_credit_budget")).toBe(1_000_000);
      expect(body.credits.by_operation).toEqual(simStats.credits);
      // Requests by operation and status, as the simulator answered them.
      for (const operation of ["accountEventLogs", "accountNftTransfers"]) {
        const answered = simStats.requests[operation]?.["200"];
        expect(answered).toBeGreaterThan(0);
        expect(body.requests[operation]?.["200"]).toBe(answered);
        expect(sample(metrics, "kaiawatch_explorer_requests_total", { operation, status: "200" })).toBe(answered);
      }
      const queued = store.outbox.length;
      expect(queued).toBeGreaterThan(0);
      expect(sample(metrics, "kaiawatch_alerts_queued_total", { sink: "out" })).toBe(queued);
      expect(sample(metrics, "kaiawatch_store_size_bytes")).toBeGreaterThan(0);
      expect(metrics).toContain("kaiawatch_process_cpu_seconds_total"); // the default process metrics too

      // Without the token: refused; the probes need none.
      expect((await fetch(`${url}/status`)).status).toBe(401);
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status, await ready.clone().text()).toBe(200);
    } finally {
      child.process.kill("SIGTERM");
    }
    expect((await child.exited).code).toBe(0);
    expect(existsSync(storePath)).toBe(true);
  }, 60_000);

  it("exits 1 with one clear line when the status port is in use", async () => {
    const blocker: Server = await new Promise((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => resolve(server));
    });
    try {
      const port = (blocker.address() as { port: number }).port;
      const { configPath } = writeConfig("busy", `127.0.0.1:${port}`);
      const child = startKaiawatch(["run", "--config", configPath, "--log-level", "silent"]);
      const { code } = await child.exited;
      expect(code).toBe(1);
      expect(child.stderr().trim()).toBe(
        `kaiawatch: KW_STATUS_LISTEN: the status server cannot listen on 127.0.0.1:${port} (status.listen): the port is already in use (another kaiawatch, or another program; change status.listen or set it to false)`,
      );
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  }, 30_000);
});
