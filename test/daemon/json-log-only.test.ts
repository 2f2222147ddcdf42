import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { startKaiawatch, waitFor } from "../helpers/child.js";
import { tempDir } from "../helpers/harness.js";
import { simulatorHead, writeConfig } from "../helpers/simulator-config.js";

/*
 * Issue 20, item 7: with seven sinks a `MaxListenersExceededWarning` line, not JSON, landed
 * in the JSON log. `kaiawatch run` with one sink of each type, each pointed at a local
 * receiver and delivering, must write nothing but JSON lines on stderr (the log). stdout is
 * the console sink's own output (text for a person, by design): no warning may land there.
 */
let sim: Simulator;
let receiver: Server;
let smtp: SMTPServer;
const received = { http: 0, mail: 0 };
const dir = tempDir("kaiawatch-json-log-");

beforeAll(async () => {
  sim = await createSimulator({ seed: 17, initialBlocks: 30, blockTime: 300, density: { eventLogs: 8, nftTransfers: 2, internalTransactions: 2 } });
  // Slack, Discord, Telegram and the webhook all accept everything, slowly enough that
  // deliveries of all sinks are in flight at once.
  receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.http++;
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(req.url?.includes("/bot") ? '{"ok":true,"result":{}}' : "ok");
      }, 50);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  smtp = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      stream.resume();
      stream.on("end", () => {
        received.mail++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  await sim.close();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  dir.remove();
});

describe("the JSON log", () => {
  it("holds only JSON lines while seven sinks of every type deliver", async () => {
    const http = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    const configPath = writeConfig(
      dir.path,
      `
${simulatorHead(sim, { storePath: join(dir.path, "store.json"), listen: "127.0.0.1:0", requestsPerSecond: 500 })}
log: { level: debug, format: json }
defaults: { schedule: "* * * * * *", start: ${sim.head() - 20}, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: token-logs, watch: token, notify: [slack, discord, telegram, email, webhook, console, file] }
sinks:
  slack: { type: slack, url: "${http}/slack", concurrency: 4 }
  discord: { type: discord, url: "${http}/discord", concurrency: 4 }
  telegram: { type: telegram, bot_token: "123456:abcdef", chat_id: "-100123", api_url: "${http}", concurrency: 4 }
  email:
    type: email
    smtp: { host: 127.0.0.1, port: ${smtpPort}, starttls: false, timeout: 5s }
    from: "kaiawatch <alerts@example.com>"
    to: [ops@example.com]
    concurrency: 4
  webhook: { type: webhook, url: "${http}/hook", allow_http: true, concurrency: 4 }
  console: { type: console }
  file: { type: file, path: "${join(dir.path, "alerts.jsonl")}" }
`,
    );
    // Any other warning Node emits once the daemon runs must reach the log as JSON too: a
    // probe, from a module loaded before kaiawatch, emits one when the test signals (SIGUSR2),
    // once the daemon is delivering; a probe on a timer would race the daemon's start on a
    // busy machine, and Node would print it before kaiawatch took warnings over.
    const probe = "data:text/javascript,process.on('SIGUSR2', () => process.emitWarning('probe from the test', 'KaiawatchTestWarning'))";
    const child = startKaiawatch(["run", "--config", configPath], { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import="${probe}"`.trim() });
    try {
      await waitFor(() => (received.http >= 40 && received.mail >= 10) || child.process.exitCode !== null, 60_000, "deliveries to every sink");
      expect(received.http).toBeGreaterThanOrEqual(40);
      expect(received.mail).toBeGreaterThanOrEqual(10);
      child.process.kill("SIGUSR2");
      await waitFor(() => child.stderr().includes("KaiawatchTestWarning") || child.process.exitCode !== null, 20_000, "the probe's warning in the log");
    } finally {
      child.process.kill("SIGTERM");
    }
    expect((await child.exited).code).toBe(0);
    const notJson = (text: string) =>
      text.split("\n").filter((line) => {
        if (line.trim() === "") return false;
        try {
          return typeof JSON.parse(line) !== "object";
        } catch {
          return true;
        }
      });
    expect(notJson(child.stderr())).toEqual([]);
    expect(child.stdout()).toContain("[kaiawatch] token-logs");
    expect(child.stdout()).not.toMatch(/Warning|\(node:/);
    expect(child.stderr()).not.toContain("MaxListenersExceededWarning");
    const warning = child.stderr().split("\n").find((line) => line.includes("KaiawatchTestWarning"));
    expect(JSON.parse(warning ?? "{}")).toMatchObject({ level: 40, msg: "node process warning", warning: "KaiawatchTestWarning", detail: "probe from the test" });
  }, 90_000);
});
