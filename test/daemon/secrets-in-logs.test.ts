import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { startKaiawatch, statusUrlOf, waitFor } from "../helpers/child.js";
import { tempDir } from "../helpers/harness.js";

/**
 * Guarantee 6 from outside: `kaiawatch run` at debug level, with a known value for every
 * kind of secret a config holds, made to fail in every place that logs an error (every
 * sink refuses, the explorer answers errors and is retried), and every line it writes is
 * searched for those values. Each secret carries the marker "SECRET" (the webhook signing
 * secret, which must be base64, carries it too), so a secret cut in part — the token in a
 * URL's path, a query string — is caught as well as the whole value.
 */
const MARKER = "SECRET";
const API_KEY = "sim-apikey-SECRET-a1b2c3";
const STATUS_TOKEN = "status-SECRET-5566";
const WEBHOOK_SECRET = "whsec_SECRETwhsecMDAxMTIyMzQ1";
const SMTP_USER = "smtp-user-SECRET-1122";
const SMTP_PASS = "smtp-pass-SECRET-3344";
const BOT_TOKEN = "123456:SECRET-tg-AbCdEf";

let sim: Simulator;
let failing: Server;
let smtp: SMTPServer;
const dir = tempDir("kaiawatch-secrets-");

beforeAll(async () => {
  sim = await createSimulator({ seed: 11, initialBlocks: 30, blockTime: 500, apiKey: API_KEY, faults: { serverErrorRate: 0.3 } });
  // The webhook receiver and the Telegram API both refuse everything.
  failing = createServer((req, res) => {
    req.resume();
    const telegram = req.url?.includes("/bot") ?? false;
    res.writeHead(telegram ? 401 : 500, { "content-type": "application/json" });
    res.end(telegram ? '{"ok":false,"error_code":401,"description":"Unauthorized"}' : '{"error":"down"}');
  });
  await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
  // An SMTP server that rejects the login.
  smtp = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    authOptional: false,
    onAuth: (_auth, _session, callback) => callback(new Error("Invalid username or password")),
    logger: false,
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  await sim.close();
  await new Promise<void>((resolve) => failing.close(() => resolve()));
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  dir.remove();
});

describe("secrets never reach a log line", () => {
  it("kaiawatch run at debug level, with every sink failing and the explorer erring, writes no secret", async () => {
    const port = (failing.address() as AddressInfo).port;
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    const webhookUrl = `http://127.0.0.1:${port}/hooks/tok-SECRET-d4e5f6?sig=SECRET-qs-778899`;
    const configPath = join(dir.path, "config.yaml");
    writeFileSync(
      configPath,
      `
explorer: { base_url: "${sim.url}", api_key: "${API_KEY}", requests_per_second: 200, max_retries: 3 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: "127.0.0.1:0", token: "${STATUS_TOKEN}" }
log: { level: debug, format: json }
defaults: { schedule: "* * * * * *", start: ${sim.head() - 10}, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: token-logs, watch: token, notify: [hook, mail, tg, out] }
sinks:
  hook: { type: webhook, url: "${webhookUrl}", secret: "${WEBHOOK_SECRET}", allow_http: true, max_attempts: 2, operational: true }
  mail:
    type: email
    smtp: { host: 127.0.0.1, port: ${smtpPort}, starttls: false, user: "${SMTP_USER}", pass: "${SMTP_PASS}", timeout: 5s }
    from: "kaiawatch <alerts@example.com>"
    to: [ops@example.com]
    max_attempts: 2
  tg: { type: telegram, bot_token: "${BOT_TOKEN}", chat_id: "-100123", api_url: "http://127.0.0.1:${port}", max_attempts: 2 }
  out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" }
`,
    );
    const child = startKaiawatch(["run", "--config", configPath, "--log-level", "debug"]);
    let statusBody = "";
    try {
      const failedSinks = () => new Set(child.stderr().split("\n").filter((line) => line.includes("delivery failed")).map((line) => (JSON.parse(line) as { sink?: string }).sink));
      await waitFor(() => ["hook", "mail", "tg"].every((sink) => failedSinks().has(sink)) || child.process.exitCode !== null, 30_000, "every sink to fail");
      await waitFor(() => child.stderr().includes("explorer request failed"), 20_000, "an explorer error to be retried");
      const url = statusUrlOf(child)!;
      expect((await fetch(`${url}/status`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
      const status = await fetch(`${url}/status`, { headers: { authorization: `Bearer ${STATUS_TOKEN}` } });
      expect(status.status).toBe(200);
      statusBody = await status.text();
    } finally {
      child.process.kill("SIGTERM");
    }
    expect((await child.exited).code).toBe(0);

    const lines = `${child.stdout()}\n${child.stderr()}`.split("\n").filter((l) => l.trim() !== "");
    // The run really logged at debug level and really met every failure.
    expect(lines.some((l) => l.includes('"level":20'))).toBe(true);
    for (const sink of ["hook", "mail", "tg"]) expect(lines.some((l) => l.includes("delivery failed") && l.includes(`"sink":"${sink}"`))).toBe(true);
    const leaks = lines.filter((l) => l.includes(MARKER));
    expect(leaks).toEqual([]);
    // /status shows the sinks' last errors: scrubbed the same way.
    expect(statusBody).toContain('"last_error"');
    expect(statusBody).not.toContain(MARKER);
  }, 90_000);
});
