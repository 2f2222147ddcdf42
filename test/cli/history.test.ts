import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createDispatcher } from "../../src/notify/dispatcher.js";
import { createWebhookSink } from "../../src/notify/sinks/webhook.js";
import { memoryIO } from "../helpers/harness.js";
import { commit, createEnv, entry, type TestEnv } from "../notify/dispatcher-fixtures.js";
import { startReceiver, type Receiver } from "../notify/receiver.js";

/**
 * `kaiawatch history` over a store the dispatcher wrote, with a real webhook receiver on
 * loopback. The clock is the test's (common.now) and the backoff a fixed minute: each retry
 * is made due by moving the clock, never by waiting for it.
 */
let env: TestEnv | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  await env?.cleanup();
  env = receiver = undefined;
});

const MINUTE = 60_000;

async function configFor(storePath: string, dir: string): Promise<string> {
  const path = join(dir, "config.yaml");
  // No status server: the command reads the store itself (the daemon's API is tested beside the page).
  await writeFile(path, `explorer: { api_key: key-for-tests-123 }\nstore: { path: ${JSON.stringify(storePath)} }\nstatus: { listen: false }\nwatches: [{ name: hot, account: "0x1111111111111111111111111111111111111111" }]\n`);
  return path;
}

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO();
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
}

describe("kaiawatch history", () => {
  it("shows a delivery that failed twice then succeeded as three attempts, with status codes, latency and errors", async () => {
    env = await createEnv();
    // Refuses each delivery (by its webhook-id) twice, then accepts it.
    const seen = new Map<string, number>();
    receiver = await startReceiver((res, req) => {
      const id = String(req.headers["webhook-id"]);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      if (seen.get(id)! <= 2) {
        res.statusCode = 503;
        res.end("try later");
        return;
      }
      res.statusCode = 200;
      res.end("ok");
    });
    const hook = createWebhookSink(env.common, "hook", { url: `${receiver.url}/in`, headers: {}, timeout: 5_000, allow_http: true });
    await commit(env.store, [entry("a1", "hook", "big-outflow"), entry("b2", "hook", "other-rule")]);
    const dispatcher = createDispatcher(env.common, {
      store: env.store,
      rules: [],
      sinks: [{ sink: hook, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }],
      backoff: { baseMs: MINUTE, maxMs: MINUTE },
      random: () => 1,
    });
    const started = env.common.now();
    // Each round sends a1 then b2; the next comes once the clock has passed the backoff.
    for (let round = 0; round < 3; round++) {
      env.clock.offsetMs = round * (MINUTE + 1_000);
      await dispatcher.drain({ timeoutMs: 5_000 });
    }
    expect(receiver.requests).toHaveLength(6);
    const entries = await env.store.listOutbox();
    expect(entries.map((e) => [e.id, e.state, e.attempts])).toEqual([
      ["a1:hook", "delivered", 3],
      ["b2:hook", "delivered", 3],
    ]);
    const config = await configFor(env.path, env.dir);
    await env.store.close();

    const table = await run("history", "--config", config, "--alert", "a1");
    expect(table.err).toBe("");
    expect(table.code).toBe(0);
    const lines = table.out.trim().split("\n");
    expect(lines[0]).toMatch(/^TIME\s+ALERT\s+SINK\s+RULE\s+ATTEMPT\s+OUTCOME\s+STATUS\s+LATENCY\s+ERROR$/);
    const rows = lines.slice(1, 4);
    expect(rows[0]).toMatch(/^\S+Z\s+a1\s+hook\s+big-outflow\s+1\s+failed\s+503\s+\d+ ms\s+KW_NOTIFY_HTTP: sink hook \(webhook\): answered HTTP 503 \(try later\)$/);
    expect(rows[1]).toMatch(/^\S+Z\s+a1\s+hook\s+big-outflow\s+2\s+failed\s+503\s+\d+ ms\s+KW_NOTIFY_HTTP: sink hook \(webhook\): answered HTTP 503/);
    expect(rows[2]).toMatch(/^\S+Z\s+a1\s+hook\s+big-outflow\s+3\s+delivered\s+200\s+\d+ ms$/);
    expect(lines.at(-1)).toBe(`3 attempts, read from the store ${env.path}`);

    const json = await run("history", "--config", config, "--json");
    const attempts = json.out.trim().split("\n").map((line) => JSON.parse(line) as { at: string; alert_id: string; outcome: string; status?: number; delivery_id: string });
    expect(attempts.map((a) => [a.alert_id, a.outcome, a.status])).toEqual([
      ["a1", "failed", 503],
      ["b2", "failed", 503],
      ["a1", "failed", 503],
      ["b2", "failed", 503],
      ["a1", "delivered", 200],
      ["b2", "delivered", 200],
    ]);
    // Times are the injected clock's: one backoff apart.
    const a1 = attempts.filter((a) => a.alert_id === "a1").map((a) => Date.parse(a.at) - started);
    expect(a1[1]! - a1[0]!).toBeGreaterThanOrEqual(MINUTE);
    expect(a1[2]! - a1[1]!).toBeGreaterThanOrEqual(MINUTE);
    // A single alert goes under its own id (the webhook-id the receiver saw).
    expect(attempts.every((a) => a.delivery_id === a.alert_id)).toBe(true);

    // The filters: outcome, rule, sink, time, limit.
    const lined = async (...args: string[]) => (await run("history", "--config", config, "--json", ...args)).out.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line) as { alert_id: string; outcome: string });
    expect((await lined("--outcome", "failed")).map((a) => a.alert_id)).toEqual(["a1", "b2", "a1", "b2"]);
    expect((await lined("--rule", "other-rule")).map((a) => a.outcome)).toEqual(["failed", "failed", "delivered"]);
    expect(await lined("--sink", "mail")).toEqual([]);
    expect((await lined("--since", new Date(started + MINUTE).toISOString())).length).toBe(4);
    expect((await lined("--until", new Date(started + MINUTE).toISOString())).length).toBe(2);
    expect((await lined("--limit", "1")).map((a) => [a.alert_id, a.outcome])).toEqual([["b2", "delivered"]]);
    expect((await run("history", "--config", config, "--outcome", "nope")).code).toBe(2);
    expect((await run("history", "--config", config, "--since", "yesterday")).code).toBe(2);
    expect((await run("history", "--store", env.path, "--sink", "none")).out).toBe(`No delivery attempt matches in the store ${env.path}.\n`);
  });

  it("says so when the store does not exist yet", async () => {
    env = await createEnv();
    await env.store.close();
    const missing = join(env.dir, "none", "store.db");
    const result = await run("history", "--config", await configFor(missing, env.dir));
    expect(result).toMatchObject({ code: 0, out: `No store at ${missing} yet: kaiawatch has not run with this store, so there is no delivery history.\n` });
  });
});
