import { createHash } from "node:crypto";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { capText } from "../../src/families/cap-record.js";
import { createConsoleSink } from "../../src/notify/sinks/console.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { HOSTILE_STRINGS, hostileLong } from "../../src/simulator/hostile.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { withDaemon } from "../helpers/with-daemon.js";
import { INVISIBLE_OR_BIDI } from "./fixtures.js";
import { startReceiver, type Receiver } from "./receiver.js";
import { WEBHOOK_SECRET, startSmtp, type Smtp } from "./e2e-support.js";

/**
 * Guarantee 5 end to end: on-chain text from the hostile simulator (mentions, markup, CR/LF
 * header injection, bidi overrides, ANSI escapes, a 100 KB revert message) goes through the
 * real daemon into all seven sink types, and arrives as inert text everywhere, within each
 * channel's limits; the JSON sinks (webhook, file) carry it unchanged.
 */
const EXPLORER = "https://kaiascan.io";
const BOT_TOKEN = "123456:hostileTestToken";
// eslint-disable-next-line no-control-regex -- control characters are what must not arrive
const RAW_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const LONG = hostileLong();
/** What enters of it: records' texts are cut at 16,384 characters with the whole text's hash (issue 29, item 8). */
const LONG_KEPT = capText(LONG);

let sim: Simulator;
let receiver: Receiver;
let smtp: Smtp;
const dir = tempDir("kaiawatch-e2e-hostile-");
let consoleOutput = "";
/** Every alert the daemon delivered, from the webhook (the document as sent, verified). */
let alerts: AlertDocument[] = [];

beforeAll(async () => {
  sim = await createSimulator({ seed: 5, hostile: true, initialBlocks: 30 });
  const busy = sim.addresses.busyWallet;
  // The hostile chain's own failures, plus one block that fails with every hostile string of the simulator and its 100 KB one.
  const start = sim.head() - 9;
  sim.addBlock({
    internalTransactions: [...HOSTILE_STRINGS, LONG].map((message) => ({
      from: busy,
      to: sim.addresses.contracts[0],
      amount: "0",
      error: "execution reverted",
      transaction_status: { status: "Fail" as const, fail_message: message },
    })),
  });
  receiver = await startReceiver((res, req) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(req.url.includes("/bot") ? '{"ok":true,"result":{}}' : "ok");
  });
  smtp = await startSmtp();
  const text = `
explorer: { base_url: "${sim.url}", requests_per_second: 500 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, explorer_url: "${EXPLORER}" }
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: false }
defaults: { start: ${start}, jitter: 0s }
watches:
  - { name: wallet, account: "${busy}", sources: [internal_transactions] }
rules:
  - name: failed-calls
    watch: wallet
    when: { status: Fail }
    summary: "Failed: {{fail_message}}"
    notify: [slack, slack-default, discord, telegram, email, webhook, console, file]
sinks:
  slack: { type: slack, url: "${receiver.url}/slack/T1/B1/tok", rate_per_second: 200, text: "{{id}} {{summary}} || {{record.transaction_status.fail_message}}" }
  slack-default: { type: slack, url: "${receiver.url}/slack-default/T1/B2/tok", rate_per_second: 200 }
  discord: { type: discord, url: "${receiver.url}/discord/1/tok", rate_per_second: 200 }
  telegram: { type: telegram, bot_token: "${BOT_TOKEN}", chat_id: "-100123", api_url: "${receiver.url}", rate_per_second: 200 }
  email:
    type: email
    smtp: { host: 127.0.0.1, port: ${smtp.port}, starttls: false, timeout: 10s }
    from: "kaiawatch <alerts@example.com>"
    to: [ops@example.com]
    subject: "[kaiawatch] {{record.transaction_status.fail_message}}"
    concurrency: 2
  webhook: { type: webhook, url: "${receiver.url}/hook", allow_http: true, secret: "${WEBHOOK_SECRET}", concurrency: 4 }
  console: { type: console }
  file: { type: file, path: "${join(dir.path, "alerts.jsonl")}" }
`;
  const common = quietCommon();
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      consoleOutput += chunk.toString("utf8");
      callback();
    },
  });
  await withDaemon({ common, config: configFromText(text), sinks: { console: createConsoleSink(common, "console", {}, stream) } }, async (daemon) => {
    const { scan, delivery } = await daemon.runOnce({ drainTimeoutMs: 25_000 });
    expect(scan.results.every((r) => r.error === undefined)).toBe(true);
    expect(delivery.pending).toBe(0);
    expect(delivery.dead).toBe(0);
  });
  const verifier = new Webhook(WEBHOOK_SECRET);
  alerts = receiver.requests
    .filter((r) => r.url === "/hook")
    .map((r) => verifier.verify(r.body, { "webhook-id": String(r.headers["webhook-id"]), "webhook-timestamp": String(r.headers["webhook-timestamp"]), "webhook-signature": String(r.headers["webhook-signature"]) }) as AlertDocument);
}, 30_000);

afterAll(async () => {
  await receiver?.close();
  await smtp?.close();
  await sim?.close();
  dir.remove();
});

function bodies(prefix: string): unknown[] {
  return receiver.requests.filter((r) => r.url.startsWith(prefix)).map((r) => JSON.parse(r.body) as unknown);
}

function failMessage(alert: AlertDocument): string {
  return (alert.record as { transaction_status: { fail_message: string } }).transaction_status.fail_message;
}

/** Text that a reader sees: no control character, bidi override or invisible character. */
function expectInert(text: string): void {
  expect(text).not.toMatch(RAW_CONTROL);
  expect(text).not.toMatch(INVISIBLE_OR_BIDI);
  expect(text).not.toContain("\r");
}

/** Every markup character of Slack outside kaiawatch's own explorer links is escaped. */
function expectSlackInert(text: string, max: number): void {
  expectInert(text);
  expect(text.length).toBeLessThanOrEqual(max);
  const outsideOurLinks = text.replace(/<https:\/\/kaiascan\.io\/[A-Za-z0-9/._~-]+\|[^<>]*>/g, "");
  expect(outsideOurLinks).not.toMatch(/[<>]/);
}

function slackTexts(message: { text: string; blocks: Array<Record<string, unknown>> }): { text: string; max: number }[] {
  const out = [{ text: message.text, max: 40_000 }];
  for (const block of message.blocks) {
    const text = block.text as { text: string } | undefined;
    if (text) out.push({ text: text.text, max: block.type === "header" ? 150 : 3000 });
    for (const field of (block.fields as { text: string }[] | undefined) ?? []) out.push({ text: field.text, max: 2000 });
    for (const element of (block.elements as { text: string }[] | undefined) ?? []) out.push({ text: element.text, max: 3000 });
  }
  return out;
}

describe("hostile on-chain text through every sink", () => {
  it("delivers every failed call, including the simulator's hostile strings and its 100 KB message", () => {
    const messages = alerts.map(failMessage);
    for (const hostile of HOSTILE_STRINGS) expect(messages).toContain(hostile);
    expect(messages).toContain(LONG_KEPT);
    expect(new Set(alerts.map((a) => a.id)).size).toBe(alerts.length);
    // The hostile chain's own failures came too, not only the chosen block.
    expect(alerts.length).toBeGreaterThan(HOSTILE_STRINGS.length + 1);
  });

  it("webhook and file: the documents carry the text exactly, as JSON", () => {
    const long = alerts.find((a) => failMessage(a) === LONG_KEPT);
    expect(long).toBeDefined();
    expect(LONG).toHaveLength(100 * 1024);
    expect(failMessage(long!)).toHaveLength(16_384);
    expect(failMessage(long!)).toContain(`${LONG.length} characters, sha256 ${createHash("sha256").update(LONG, "utf8").digest("hex")}]`);
    const lines = readJsonLines(join(dir.path, "alerts.jsonl"));
    expect(lines.map((a) => a.id).sort()).toEqual(alerts.map((a) => a.id).sort());
    expect(lines.map(failMessage).sort()).toEqual(alerts.map(failMessage).sort());
    // The summary a rule template builds from the message is one line and short, whatever the message.
    for (const alert of alerts) {
      expect(alert.summary).not.toMatch(/[\r\n]/);
      expect(Array.from(alert.summary).length).toBeLessThanOrEqual(500);
    }
  });

  it("slack (template and built-in layout): mentions, links and markup escaped, invisible characters gone, within limits", () => {
    const templated = bodies("/slack/") as { text: string; blocks: Array<Record<string, unknown>>; unfurl_links: boolean }[];
    const builtIn = bodies("/slack-default/") as typeof templated;
    expect(templated).toHaveLength(alerts.length);
    expect(builtIn).toHaveLength(alerts.length);
    for (const message of [...templated, ...builtIn]) {
      expect(message.unfurl_links).toBe(false);
      for (const { text, max } of slackTexts(message)) expectSlackInert(text, max);
    }
    const all = templated.map((m) => m.text).join("\n");
    expect(all).toContain("&lt;!channel&gt; &lt;!here&gt; &lt;@U024BE7LH&gt;");
    expect(all).toContain("&lt;script&gt;");
    expect(all).toContain("&lt;U+202E&gt;");
    // Every templated message names its alert: each alert arrived once.
    expect(new Set(templated.map((m) => m.text.split(" ")[0])).size).toBe(alerts.length);
  });

  it("discord: nothing pings, every markdown character of on-chain text is escaped, within limits", () => {
    const messages = bodies("/discord/") as { allowed_mentions: { parse: unknown[] }; embeds: { title: string; description?: string; fields?: { name: string; value: string }[]; footer?: { text: string } }[] }[];
    expect(messages).toHaveLength(alerts.length);
    for (const message of messages) {
      expect(message.allowed_mentions).toEqual({ parse: [] });
      for (const embed of message.embeds) {
        const texts = [embed.title, embed.description ?? "", ...(embed.fields ?? []).flatMap((f) => [f.name, f.value]), embed.footer?.text ?? ""];
        expect(texts.join("").length).toBeLessThanOrEqual(6000);
        expect((embed.description ?? "").length).toBeLessThanOrEqual(4096);
        for (const text of texts) expectInert(text);
        // The footer (watch, source, network) is config text, and Discord renders no markdown there.
        for (const text of texts.slice(0, -1)) {
          const outsideOurLinks = text.replace(/\[(Transaction|Block|Account|Contract|Token)\]\(https:\/\/kaiascan\.io\/[A-Za-z0-9/._~-]+\)/g, "");
          // Each of these characters is escaped by a backslash (or is the escaped backslash itself).
          for (const match of outsideOurLinks.matchAll(/[@[\]()<>*_~`|]/g)) expect(outsideOurLinks.charAt(match.index - 1), outsideOurLinks).toBe("\\");
        }
      }
    }
    expect(JSON.stringify(messages)).toContain("\\\\@everyone");
  });

  it("telegram: only kaiawatch's own tags in the HTML, within 4096 characters, the token only in the path", () => {
    const requests = receiver.requests.filter((r) => r.url === `/bot${BOT_TOKEN}/sendMessage`);
    expect(requests).toHaveLength(alerts.length);
    for (const request of requests) {
      const message = JSON.parse(request.body) as { text: string; parse_mode: string; disable_web_page_preview: boolean };
      expect(message.parse_mode).toBe("HTML");
      expect(message.disable_web_page_preview).toBe(true);
      expect(message.text.length).toBeLessThanOrEqual(4096);
      expectInert(message.text.replace(/\n/g, " "));
      const outsideOurTags = message.text.replace(/<\/?(b|i)>|<a href="https:\/\/kaiascan\.io\/[A-Za-z0-9/._~-]+">|<\/a>/g, "");
      expect(outsideOurTags).not.toMatch(/[<>]/);
      expect(request.body).not.toContain(BOT_TOKEN);
    }
    expect(requests.map((r) => r.body).join("")).toContain("&lt;script&gt;");
  });

  it("email: one-line subjects with no injected header or recipient, escaped HTML, a plain-text part, Message-ID from the alert id", () => {
    expect(smtp.mails).toHaveLength(alerts.length);
    const ids = new Set(alerts.map((a) => `<${a.id}@kaiawatch>`));
    for (const [i, mail] of smtp.mails.entries()) {
      expect(ids.has(mail.messageId ?? "")).toBe(true);
      expect(smtp.recipients[i]).toEqual(["ops@example.com"]);
      expect(mail.headers.has("bcc")).toBe(false);
      expect(mail.headers.has("x-evil")).toBe(false);
      expect(mail.subject).toMatch(/^\[kaiawatch\] /);
      expect(mail.subject!.length).toBeLessThanOrEqual(200);
      expectInert(mail.subject!);
      expect(mail.subject).not.toContain("\n");
      expect(mail.text).toBeTruthy();
      expectInert(mail.text!.replace(/\n/g, " "));
      const html = String(mail.html);
      expect(html).not.toMatch(/<script|<img/i);
      expectInert(html.replace(/\n/g, " "));
    }
    const injected = smtp.mails.find((m) => m.subject?.includes("Bcc: victim@example.com"));
    expect(injected?.subject).toBe("[kaiawatch] line one Bcc: victim@example.com Subject: injected body");
    expect(smtp.mails.map((m) => String(m.html)).join("")).toContain("&lt;script&gt;");
    expect(new Set(smtp.mails.map((m) => m.messageId)).size).toBe(alerts.length);
  });

  it("console: one readable block per alert, no escape sequence or bidi override reaches the terminal", () => {
    expectInert(consoleOutput.replace(/\n/g, " "));
    expect(consoleOutput).not.toContain("\u001b");
    expect(consoleOutput.match(/^\[kaiawatch\] failed-calls/gm)).toHaveLength(alerts.length);
    for (const line of consoleOutput.split("\n")) expect(line.length).toBeLessThan(1000);
    expect(consoleOutput).toContain("invoice<U+202E>gnp.exe");
    expect(consoleOutput).toContain("ANSI red");
  });
});
