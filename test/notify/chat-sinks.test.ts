import { afterEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { createTestCommon } from "../../src/common/common.js";
import { SinkError, type Delivery } from "../../src/notify/sink.js";
import { buildSlackMessage, createSlackSink, SLACK_LIMITS, type SlackMessage } from "../../src/notify/sinks/slack.js";
import { buildDiscordMessage, createDiscordSink, DISCORD_LIMITS, embedSize, type DiscordMessage } from "../../src/notify/sinks/discord.js";
import { buildTelegramMessage, createTelegramSink, TELEGRAM_LIMITS, type TelegramMessage } from "../../src/notify/sinks/telegram.js";
import { compileTemplate } from "../../src/notify/template.js";
import { SinkConfigError } from "../../src/notify/errors.js";
import { startReceiver, type Receiver } from "./receiver.js";
import { CONTRACT, HOSTILE, HOSTILE_NAME, INVISIBLE_OR_BIDI, LONE_SURROGATE, digest, nftAlert, single } from "./fixtures.js";

const signal = new AbortController().signal;
const TOKEN = "123456789:AAH-secret_token_value";
let receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  receivers = [];
});
async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

/** Every string in a payload, for checks that must hold wherever text goes. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

function checkClean(texts: string[]): void {
  for (const t of texts) {
    expect(t).not.toMatch(INVISIBLE_OR_BIDI);
    expect(t).not.toMatch(LONE_SURROGATE);
    expect(t).not.toContain("\r");
  }
}

function checkSlack(message: SlackMessage): void {
  expect(message.text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
  expect(message.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
  expect(message).toMatchObject({ unfurl_links: false, unfurl_media: false });
  for (const block of message.blocks) {
    if (block.type === "header") expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.header);
    if (block.type === "section" && "text" in block) expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.section);
    if (block.type === "section" && "fields" in block) {
      expect(block.fields.length).toBeLessThanOrEqual(SLACK_LIMITS.fieldsPerSection);
      for (const f of block.fields) expect(f.text.length).toBeLessThanOrEqual(SLACK_LIMITS.field);
    }
  }
  const texts = strings(message);
  checkClean(texts);
  for (const t of texts) {
    // Only our own explorer links may use Slack's <…> syntax.
    const rest = t.replace(/<https:\/\/kaiascan\.io\/[A-Za-z0-9/]+\|[A-Za-z ]+>/g, "");
    expect(rest).not.toMatch(/[<>]/);
  }
}

function checkDiscord(message: DiscordMessage): void {
  expect(message.allowed_mentions).toEqual({ parse: [] });
  expect(message.embeds.length).toBeLessThanOrEqual(DISCORD_LIMITS.embeds);
  expect(message.embeds.reduce((n, e) => n + embedSize(e), 0)).toBeLessThanOrEqual(DISCORD_LIMITS.total);
  for (const e of message.embeds) {
    expect(e.title.length).toBeLessThanOrEqual(DISCORD_LIMITS.title);
    expect(e.description?.length ?? 0).toBeLessThanOrEqual(DISCORD_LIMITS.description);
    expect(e.fields?.length ?? 0).toBeLessThanOrEqual(DISCORD_LIMITS.fields);
    for (const f of e.fields ?? []) {
      expect(f.name.length).toBeLessThanOrEqual(DISCORD_LIMITS.fieldName);
      expect(f.value.length).toBeLessThanOrEqual(DISCORD_LIMITS.fieldValue);
    }
  }
  const texts = strings(message.embeds);
  checkClean(texts);
  for (const t of texts) {
    expect(t).not.toMatch(/(^|[^\\])@(everyone|here)/);
    expect(t).not.toMatch(/(^|[^\\])<[@#:t]/);
    // Masked links only to our explorer.
    expect(t.replace(/\[[A-Za-z ]+\]\(https:\/\/kaiascan\.io\/[A-Za-z0-9/]+\)/g, "")).not.toMatch(/(^|[^\\])\]\(/);
  }
}

function checkTelegram(message: TelegramMessage): void {
  expect(message.text.length).toBeLessThanOrEqual(TELEGRAM_LIMITS.text);
  expect(message).toMatchObject({ parse_mode: "HTML", disable_web_page_preview: true });
  checkClean([message.text]);
  const rest = message.text.replace(/<\/?(b|i)>|<a href="https:\/\/kaiascan\.io\/[A-Za-z0-9/]+">|<\/a>/g, "");
  expect(rest).not.toMatch(/[<>]/);
  // Tags are balanced, so Telegram can parse the message.
  for (const tag of ["b", "i", "a"]) expect(message.text.split(`</${tag}>`).length).toBe(message.text.split(new RegExp(`<${tag}[ >]`)).length);
}

describe("slack sink", () => {
  it("delivers a Block Kit message with hostile strings defused, links ours, within limits", async () => {
    const r = await receiver();
    const sink = createSlackSink(createTestCommon(), "ops", { url: `${r.url}/services/T0/B0/secret` });
    await sink.send(single(nftAlert({}, `${HOSTILE_NAME} ${HOSTILE.huge}`)), signal);
    const message = JSON.parse(r.requests[0]!.body) as SlackMessage;
    checkSlack(message);
    const all = JSON.stringify(message);
    expect(all).toContain("&lt;!channel&gt;");
    expect(all).toContain("&lt;script&gt;");
    expect(all).toContain("invoice<U+202E>gpj.exe".replace(/</g, "&lt;").replace(/>/g, "&gt;"));
    expect(all).toContain(`<https://kaiascan.io/tx/0x${"ab".repeat(32)}|Transaction>`);
    // The token name is shown with its contract address beside it.
    const fields = message.blocks.flatMap((b) => ("fields" in b ? b.fields.map((f) => f.text) : []));
    const token = fields.find((f) => f.startsWith("*token*"));
    expect(token).toContain(CONTRACT);
  });

  it("renders the operator's template with escaped values", () => {
    const template = compileTemplate("*{{rule}}* {{#alerts}}{{enrichment.token.name}} <{{links.transaction}}|tx>{{/alerts}}");
    const message = buildSlackMessage(single(nftAlert({}, HOSTILE.slackMention)), template);
    expect(message.text).toContain("*collection-feed* &lt;!channel&gt; &lt;!here&gt; &lt;@U024BE7LH&gt; <https://kaiascan.io/tx/");
    expect(message.blocks[0]).toMatchObject({ type: "section" });
  });

  it("renders a digest: first 20 shown, the count in the headline", () => {
    const message = buildSlackMessage(digest(500, HOSTILE.huge));
    checkSlack(message);
    expect(message.text).toContain(`500 NFT transfers for rule collection-feed of collection ${CONTRACT}; first 20 shown`);
    expect(JSON.stringify(message.blocks).match(/\|tx>/g)).toHaveLength(20);
  });

  it("never puts the webhook URL in an error", async () => {
    const r = await receiver((res, req) => {
      res.statusCode = 404;
      res.end(`no_service for ${req.url}`);
    });
    const url = `${r.url}/services/T0/B0/very-secret-path`;
    const error = await createSlackSink(createTestCommon(), "ops", { url }).send(single(), signal).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    const e = error as SinkError;
    expect(e.permanent).toBe(true);
    expect(e.message).toContain("sink ops (slack)");
    expect(`${e.message} ${e.details ?? ""} ${e.stack ?? ""}`).not.toContain("very-secret-path");
  });

  it("requires https except to this machine", () => {
    expect(() => createSlackSink(createTestCommon(), "ops", { url: "http://hooks.slack.example/x" })).toThrow(SinkConfigError);
    expect(() => createSlackSink(createTestCommon(), "ops", { url: "https://hooks.slack.com/x", text: "{{#a}}" })).toThrow(/text: section 'a' is never closed at line 1, column 1/);
  });
});

describe("discord sink", () => {
  it("delivers embeds with mentions and markdown defused and allowed_mentions empty", async () => {
    const r = await receiver((res) => {
      res.statusCode = 204;
      res.end();
    });
    const sink = createDiscordSink(createTestCommon(), "feed", { url: `${r.url}/api/webhooks/1/secret` });
    await sink.send(single(nftAlert({}, `${HOSTILE_NAME} ${HOSTILE.huge}`)), signal);
    const message = JSON.parse(r.requests[0]!.body) as DiscordMessage;
    checkDiscord(message);
    const all = strings(message.embeds).join("\n");
    expect(all).toContain("\\@everyone");
    expect(all).toContain("\\<script\\>alert\\(1\\)\\</script\\>");
    expect(message.embeds[0]!.fields!.find((f) => f.name === "token")!.value).toContain(CONTRACT);
  });

  it("fits a digest of 500 alerts with 100 KB names into one message", () => {
    const message = buildDiscordMessage(digest(500, HOSTILE.huge));
    checkDiscord(message);
    const description = message.embeds[0]!.description!;
    const shown = description.match(/\[tx\]\(/g)!.length;
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThanOrEqual(20);
    expect(description).toContain(`first ${shown} shown`);
  });

  it("429 with retry_after is retryable", async () => {
    const r = await receiver((res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "2" });
      res.end(JSON.stringify({ message: "You are being rate limited.", retry_after: 1.5, global: false }));
    });
    const error = (await createDiscordSink(createTestCommon(), "feed", { url: r.url }).send(single(), signal).catch((e: unknown) => e)) as SinkError;
    expect(error.permanent).toBe(false);
    expect(error.retryAfterMs).toBe(2000);
  });
});

describe("telegram sink", () => {
  it("posts HTML to /bot<token>/sendMessage with hostile strings escaped", async () => {
    const r = await receiver((res) => res.end('{"ok":true,"result":{}}'));
    const sink = createTelegramSink(createTestCommon(), "tg", { bot_token: TOKEN, chat_id: "-1001234567890", api_url: r.url });
    await sink.send(single(nftAlert({}, `${HOSTILE_NAME} ${HOSTILE.huge}`)), signal);
    expect(r.requests[0]!.url).toBe(`/bot${TOKEN}/sendMessage`);
    const message = JSON.parse(r.requests[0]!.body) as TelegramMessage;
    expect(message.chat_id).toBe("-1001234567890");
    checkTelegram(message);
    expect(message.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(message.text).toMatch(new RegExp(`<b>token:</b> [^\\n]*${CONTRACT}`));
  });

  it("keeps a digest within 4096 characters with whole lines", () => {
    const message = buildTelegramMessage(digest(500, HOSTILE.huge), 42);
    checkTelegram(message);
    expect(message.text).toMatch(/500 NFT transfers .*; first \d+ shown/);
  });

  it("shows the first 20 alerts of a digest of ordinary names", () => {
    const text = buildTelegramMessage(digest(30, "Kitties"), 1).text;
    expect(text).toContain("30 NFT transfers for rule collection-feed of collection");
    expect(text).toContain("; first 20 shown");
    expect(text.match(/>tx<\/a>/g)).toHaveLength(20);
    const discord = buildDiscordMessage(digest(30, "Kitties")).embeds[0]!.description!;
    expect(discord).toContain("first 20 shown");
    expect(discord.match(/\[tx\]\(/g)).toHaveLength(20);
  });

  it("never puts the bot token in an error, even when the server echoes it", async () => {
    const r = await receiver((res, req) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: false, error_code: 401, description: `Unauthorized: ${req.url}` }));
    });
    const common = createTestCommon();
    const sink = createTelegramSink(common, "tg", { bot_token: TOKEN, chat_id: "42", api_url: r.url });
    const error = (await sink.send(single(), signal).catch((e: unknown) => e)) as SinkError;
    expect(error).toBeInstanceOf(SinkError);
    expect(error.permanent).toBe(true);
    expect(error.message).toContain("Unauthorized");
    expect(`${error.message} ${error.details ?? ""} ${error.stack ?? ""}`).not.toContain(TOKEN);
    expect(common.secrets.redact(`token ${TOKEN}`)).not.toContain(TOKEN);
  });

  it("rejects a token that could change the request path", () => {
    expect(() => createTelegramSink(createTestCommon(), "tg", { bot_token: "123:abc/../x", chat_id: "1", api_url: "https://api.telegram.org" })).toThrow(/bot_token/);
  });
});

describe("message builders (properties)", () => {
  const text = fc.array(fc.oneof(fc.constantFrom(...Object.values(HOSTILE).map((s) => s.slice(0, 3000))), fc.string({ unit: "binary", maxLength: 50 })), { maxLength: 8 }).map((p) => p.join(""));
  it("stay within every limit and leak no markup for any names and digest sizes", () => {
    fc.assert(
      fc.property(text, text, fc.integer({ min: 1, max: 60 }), (name, rule, count) => {
        const d: Delivery = digest(count, name);
        d.rule = rule;
        for (const a of d.alerts) a.rule = rule;
        checkSlack(buildSlackMessage(d));
        checkDiscord(buildDiscordMessage(d));
        checkTelegram(buildTelegramMessage(d, 1));
      }),
      { numRuns: 60 },
    );
  });
});
