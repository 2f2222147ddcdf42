import { performance } from "node:perf_hooks";
import { Writable } from "node:stream";
import pg from "pg";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { createDaemon, type Daemon } from "../../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../../src/model/alert-document.js";
import { createSimulator } from "../../../src/simulator/index.js";
import { createPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { configFromText } from "../../helpers/harness.js";
import { busyTokenToOut } from "../../helpers/simulator-config.js";
import { startReceiver } from "../../notify/receiver.js";
import { until } from "../../notify/dispatcher-fixtures.js";
import { usePostgres } from "../postgres/pg-fixtures.js";

/**
 * A PostgreSQL stall (issue 29, item 5): another session holds a lock on kaiawatch's tables.
 * Before, no statement or lock timeout was set: the pool filled with waiting queries, /readyz
 * and /status hung, nothing was logged, and afterwards health checks that had waited finished
 * out of order and sent false `head_backwards` alerts. Now every query gives up within the
 * configured timeouts (small here), the health endpoints answer within a bound from what they
 * last knew, and no operational alert about the head or the sources goes out.
 *
 * The daemon runs in-process with its timers (ticks every second, health checks every 200 ms),
 * against the simulator (a block every 200 ms) and a real PostgreSQL; the lock is held 3 s.
 */
const pgServer = usePostgres();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve().then(cleanup).catch(() => undefined);
});

const HOLD_MS = 3_000;
const ANSWER_BOUND_MS = 2_000;

async function timed(url: string): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  const answer = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const body = await answer.text();
  return { status: answer.status, body, ms: performance.now() - started };
}

describe("a PostgreSQL stall: another session holds a lock kaiawatch needs", () => {
  it("queries give up within their timeouts, health answers within 2 s saying the store is not answering, and no false operational alert", async () => {
    const url = await pgServer.database();
    const sim = await createSimulator({ initialBlocks: 30 });
    cleanups.push(() => sim.close());
    const miner = setInterval(() => sim.mine(1), 200);
    cleanups.push(() => clearInterval(miner));
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { url: "${url}", lease: 5s, statement_timeout: 1s, lock_timeout: 300ms, pool_timeout: 500ms }
status: { listen: "127.0.0.1:0" }
operational: { check_interval: 200ms }
${busyTokenToOut(sim, `schedule: "* * * * * *", start: latest`)}
sinks:
  out: { type: webhook, url: "${receiver.url}/out", allow_http: true }
  ops: { type: webhook, url: "${receiver.url}/ops", allow_http: true, operational: true }
`);
    const logLines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logLines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
        callback();
      },
    });
    const daemon: Daemon = await createDaemon(createTestCommon({ logger: pino({ level: "info" }, destination) }), { config });
    cleanups.push(() => daemon.stop());
    await daemon.start();
    const base = daemon.statusUrl()!;
    await until(async () => (await timed(`${base}/readyz`)).status === 200, 20_000, "the daemon ready");

    // Another session takes the tables kaiawatch reads and writes, and holds them.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE outbox, cursors, meta IN ACCESS EXCLUSIVE MODE");
    const heldFrom = performance.now();
    const answers: Array<{ path: string; status: number; body: string; ms: number }> = [];
    while (performance.now() - heldFrom < HOLD_MS) {
      for (const path of ["/healthz", "/readyz", "/status"]) answers.push({ path, ...(await timed(`${base}${path}`)) });
    }
    await holder.query("COMMIT");

    const slowest = Math.max(...answers.map((answer) => answer.ms));
    expect(slowest, `the slowest health answer during the stall: ${Math.round(slowest)} ms`).toBeLessThan(ANSWER_BOUND_MS);
    expect(answers.filter((answer) => answer.path === "/healthz").every((answer) => answer.status === 200)).toBe(true);
    const readyz = answers.filter((answer) => answer.path === "/readyz");
    expect(readyz.some((answer) => answer.status === 503 && /store: the store .* (is not answering|cannot be read)/.test(answer.body)), readyz.map((a) => a.body).join("\n")).toBe(true);
    const statusAnswers = answers.filter((answer) => answer.path === "/status");
    expect(statusAnswers.map((answer) => answer.status), statusAnswers.map((answer) => answer.body.slice(0, 300)).join("\n")).toEqual(statusAnswers.map(() => 200));
    const statuses = statusAnswers.map((answer) => JSON.parse(answer.body) as { ready: boolean; reasons: string[] });
    expect(statuses.some((body) => !body.ready && body.reasons.some((reason) => reason.startsWith("store:")))).toBe(true);
    // Said in the log: the timeouts' failures name their config key.
    expect(logLines.some((line) => line.includes("store.lock_timeout") || line.includes("store.statement_timeout") || line.includes("store.pool_timeout"))).toBe(true);

    // Back: ready again by itself, and a few health checks later no false alert went out.
    await until(async () => (await timed(`${base}/readyz`)).status === 200, 20_000, "ready again after the stall");
    // Five health checks (every 200 ms) after it; the running dispatcher sends what they raise within milliseconds.
    const checkedUntil = Date.now() + 1_000;
    await until(() => Date.now() > checkedUntil, 5_000, "more health checks");
    await daemon.dispatcher.drain({ timeoutMs: 500 });
    const operational = receiver.requests.filter((request) => request.url === "/ops").map((request) => JSON.parse(request.body) as AlertDocument);
    const kinds = operational.map((alert) => `${String((alert.record as { kind?: unknown }).kind)} ${alert.status ?? ""}`);
    expect(kinds.filter((kind) => kind.startsWith("head_") || kind.startsWith("source_")), kinds.join(", ")).toEqual([]);
  }, 60_000);

  it("a statement_timeout refusal at start is KW_STORE_TIMEOUT naming the step and the key", async () => {
    const url = await pgServer.database();
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    cleanups.push(() => holder.end());
    // The schema's advisory lock, held by "another replica migrating": the start waits past its lock_timeout.
    await holder.query("SELECT pg_advisory_lock($1)", [0x6b777363]);
    const error = await createPostgresStore(createTestCommon(), { url, replicaId: "r1", timeouts: { statementMs: 400, lockMs: 200, acquireMs: 500 } }).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(error?.code).toBe("KW_STORE_TIMEOUT");
    expect(error?.message).toContain("creating or migrating its schema");
    expect(error?.message).toMatch(/store\.(statement|lock)_timeout \(0\.[24] s\)/);
    // The server's address names the store; no credentials.
    expect(error?.message).not.toContain("@");
  });
});
