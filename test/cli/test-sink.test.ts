import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { main } from "../../src/cli/main.js";
import { memoryIO, readJsonLines, tempDir } from "../helpers/harness.js";
import { startReceiver } from "../notify/receiver.js";
import { WEBHOOK_SECRET, startSmtp } from "../notify/e2e-support.js";

/** `kaiawatch test-sink` through main(), against real receivers on 127.0.0.1. */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const SLACK_SECRET_PATH = "/services/T0001/B0002/sl4ckS3cretT0ken";
const BOT_TOKEN = "123456789:AAHsecretTelegramTokenValue";

function writeConfig(sinks: string): string {
  const dir = tempDir("kaiawatch-test-sink-");
  cleanups.push(dir.remove);
  const path = join(dir.path, "config.yaml");
  writeFileSync(
    path,
    `
store: { path: "${join(dir.path, "store.json")}" }
watches: [ { name: token, contract: "0x1111111111111111111111111111111111111111" } ]
sinks:
${sinks}
`,
  );
  return path;
}

async function testSink(args: string[], env: NodeJS.ProcessEnv = {}) {
  const io = memoryIO(env);
  const code = await main(["test-sink", ...args], io);
  return { code, out: io.out(), err: io.err(), all: `${io.out()}${io.err()}` };
}

describe("kaiawatch test-sink", () => {
  it("sends a signed, clearly labelled test alert through a webhook sink and reports it accepted", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const config = writeConfig(`  audit: { type: webhook, url: "${receiver.url}/hook", allow_http: true, secret: "${WEBHOOK_SECRET}" }`);

    const result = await testSink(["audit", "--config", config]);

    expect(result.code, result.all).toBe(0);
    expect(result.out).toMatch(/^sink audit \(webhook\): accepted the test alert in \d+ ms \(delivery id test-[0-9a-z]+-[0-9a-f]{8}\)\.\n$/);
    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0]!;
    const headers = { "webhook-id": String(request.headers["webhook-id"]), "webhook-timestamp": String(request.headers["webhook-timestamp"]), "webhook-signature": String(request.headers["webhook-signature"]) };
    const body = new Webhook(WEBHOOK_SECRET).verify(request.body, headers) as { id: string; rule: string; summary: string };
    expect(body.rule).toBe("kaiawatch-test");
    expect(body.summary).toContain("Test alert");
    expect(result.out).toContain(body.id);
    expect(headers["webhook-id"]).toBe(body.id);
  });

  it("reports a permanent error with the receiver's answer, never the secret URL", async () => {
    const receiver = await startReceiver((res, req) => {
      // A receiver that echoes the path it was called on, secret included.
      res.writeHead(404, { "content-type": "text/plain" });
      res.end(`no_service for ${req.url}`);
    });
    cleanups.push(() => receiver.close());
    const config = writeConfig("  ops-slack: { type: slack, url: \"${SLACK_URL}\" }");

    const result = await testSink(["ops-slack", "--config", config], { SLACK_URL: `${receiver.url}${SLACK_SECRET_PATH}` });

    expect(result.code, result.all).toBe(1);
    expect(result.out).toContain("sink ops-slack (slack): permanent error: KW_NOTIFY_HTTP");
    expect(result.out).toContain("HTTP 404");
    expect(result.out).toContain("no_service");
    expect(result.out).toContain("dead letter");
    expect(result.all).not.toContain("sl4ckS3cretT0ken");
    expect(result.all).not.toContain(String(receiver.url.split(":")[2]));
    expect(receiver.requests).toHaveLength(1);
    const message = JSON.parse(receiver.requests[0]!.body) as { text: string };
    expect(message.text).toContain("kaiawatch-test");
  });

  it("reports a retryable error and the pause a receiver asked for with Retry-After", async () => {
    const receiver = await startReceiver((res) => {
      res.writeHead(429, { "retry-after": "7" });
      res.end("rate limited");
    });
    cleanups.push(() => receiver.close());
    const config = writeConfig(`  ops-slack: { type: slack, url: "${receiver.url}${SLACK_SECRET_PATH}" }`);

    const result = await testSink(["--config", config, "ops-slack"]);

    expect(result.code, result.all).toBe(1);
    expect(result.out).toContain("sink ops-slack (slack): retryable error: KW_NOTIFY_HTTP");
    expect(result.out).toContain("HTTP 429");
    expect(result.out).toContain("pause of 7 s");
    expect(result.out).toContain("retry");
    expect(result.all).not.toContain("sl4ckS3cretT0ken");
  });

  it("reports a receiver that is down as retryable", async () => {
    // A port that was free a moment ago: connecting is refused.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const config = writeConfig(`  audit: { type: webhook, url: "http://127.0.0.1:${port}/hook", allow_http: true }`);

    const result = await testSink(["audit", "--config", config]);

    expect(result.code, result.all).toBe(1);
    expect(result.out).toContain("sink audit (webhook): retryable error: KW_NOTIFY_NETWORK");
    expect(result.out).toContain("ECONNREFUSED");
  });

  it("never shows a Telegram bot token, even when the API echoes it", async () => {
    const receiver = await startReceiver((res, req) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: false, error_code: 401, description: `Unauthorized: ${req.url}` }));
    });
    cleanups.push(() => receiver.close());
    const config = writeConfig(`  tg: { type: telegram, bot_token: "\${BOT_TOKEN}", chat_id: "-100123", api_url: "${receiver.url}" }`);

    const result = await testSink(["tg", "--config", config], { BOT_TOKEN });

    expect(result.code, result.all).toBe(1);
    expect(result.out).toContain("sink tg (telegram): permanent error");
    expect(receiver.requests[0]?.url).toBe(`/bot${BOT_TOKEN}/sendMessage`);
    expect(result.all).not.toContain(BOT_TOKEN);
    expect(result.all).not.toContain("AAHsecretTelegramTokenValue");
  });

  it("sends a test email through a real SMTP server, and tells a 451 (retryable) from a 550 (permanent)", async () => {
    const answers = [undefined, { code: 451, message: "4.3.0 mailbox busy, try later" }, { code: 550, message: "5.1.1 no such user" }];
    const smtp = await startSmtp((n) => answers[n]);
    cleanups.push(() => smtp.close());
    const config = writeConfig(`  mail: { type: email, smtp: { host: 127.0.0.1, port: ${smtp.port}, starttls: false, timeout: 5s }, from: "kaiawatch <alerts@example.com>", to: [ops@example.com] }`);

    const ok = await testSink(["mail", "--config", config]);
    expect(ok.code, ok.all).toBe(0);
    expect(ok.out).toContain("sink mail (email): accepted the test alert");
    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!;
    expect(mail.subject).toContain("kaiawatch-test");
    expect(mail.text).toContain("Test alert from kaiawatch test-sink");
    const id = /delivery id (test-[^)]+)\)/.exec(ok.out)?.[1];
    expect(mail.messageId).toBe(`<${id}@kaiawatch>`);

    const busy = await testSink(["mail", "--config", config]);
    expect(busy.code, busy.all).toBe(1);
    expect(busy.out).toContain("retryable error: KW_NOTIFY_SMTP");
    expect(busy.out).toContain("451");

    const refused = await testSink(["mail", "--config", config]);
    expect(refused.code, refused.all).toBe(1);
    expect(refused.out).toContain("permanent error: KW_NOTIFY_SMTP");
    expect(refused.out).toContain("550");
    expect(smtp.attempts).toBe(3);
    expect(smtp.mails).toHaveLength(1);
  });

  it("prints a console sink's test alert in its own output and appends one line to a file sink", async () => {
    const dir = tempDir("kaiawatch-test-sink-file-");
    cleanups.push(dir.remove);
    const file = join(dir.path, "alerts.jsonl");
    const config = writeConfig(`  term: { type: console }\n  log: { type: file, path: "${file}" }`);

    const term = await testSink(["term", "--config", config]);
    expect(term.code, term.all).toBe(0);
    expect(term.out).toContain("[kaiawatch] kaiawatch-test");
    expect(term.out).toContain("sink term (console): accepted the test alert");

    const log = await testSink(["log", "--config", config]);
    expect(log.code, log.all).toBe(0);
    const lines = readJsonLines(file);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.rule).toBe("kaiawatch-test");
    expect(log.out).toContain(lines[0]!.id);
  });

  it("exits 2 listing the configured sinks when the name is unknown or missing", async () => {
    const config = writeConfig("  term: { type: console }\n  audit: { type: webhook, url: https://example.com/hook }");

    const unknown = await testSink(["slack", "--config", config]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('no sink named "slack"');
    expect(unknown.err).toContain("configured sinks: term, audit");

    const missing = await testSink(["--config", config]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("name the sink to test (configured sinks: term, audit)");

    const two = await testSink(["term", "audit", "--config", config]);
    expect(two.code).toBe(2);
    expect(two.err).toContain("one sink at a time");

    const flag = await testSink(["term", "--config", config, "--bogus"]);
    expect(flag.code).toBe(2);
    expect(flag.err).toContain("--bogus");
  });

  it("exits 2 on a bad config, naming the problem, before sending anything", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const config = writeConfig(`  audit: { type: webhook, url: "${receiver.url}/hook" }`);

    const result = await testSink(["audit", "--config", config]);

    expect(result.code).toBe(2);
    expect(result.err).toContain("sinks.audit.url");
    expect(result.err).toContain("https");
    expect(result.err).not.toMatch(/\n\s+at /);
    expect(receiver.requests).toHaveLength(0);

    const none = await testSink(["audit", "--config", join(tempDir().path, "missing.yaml")]);
    expect(none.code).toBe(2);
  });
});
