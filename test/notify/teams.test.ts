import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { resolvedAlertId } from "../../src/model/alert-status.js";
import { SinkError, type Delivery } from "../../src/notify/sink.js";
import { SinkConfigError } from "../../src/notify/errors.js";
import { TEAMS_LIMITS, buildTeamsMessage, createTeamsSink, messageBytes, type TeamsMessage } from "../../src/notify/sinks/teams.js";
import type { Received, Receiver } from "./receiver.js";
import { startTeamsReceiver, teamsProblems } from "./teams-receiver.js";
import { HOSTILE_NAME, INVISIBLE_OR_BIDI, LONE_SURROGATE, digest, nftAlert } from "./fixtures.js";

const signal = new AbortController().signal;

/** What an Adaptive Card would read as markup, and its date functions. */
const CARD_MARKUP = "**bold** _it_ [spoof](https://kaiascan.io.evil.example/tx) {{DATE(2017-02-14T06:00:00Z, SHORT)}} {{{TIME(2017-02-14T06:00:00Z)}}}";
const CARD_HOSTILE = `${CARD_MARKUP} ${HOSTILE_NAME}`;

let receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  receivers = [];
});

async function teams(...args: Parameters<typeof startTeamsReceiver>) {
  const r = await startTeamsReceiver(...args);
  receivers.push(r);
  return r;
}

const deliveryOf = (alert: AlertDocument): Delivery => ({ id: alert.id, rule: alert.rule, alerts: [alert], attempt: 1 });

/** Every element and action of a card, nested ones (a TextRun's selectAction) included. */
function walk(value: unknown, visit: (node: Record<string, unknown>) => void): void {
  if (Array.isArray(value)) value.forEach((item) => walk(item, visit));
  else if (typeof value === "object" && value !== null) {
    visit(value as Record<string, unknown>);
    Object.values(value).forEach((item) => walk(item, visit));
  }
}

/** The checks every message must pass wherever on-chain text goes. */
function checkDefused(message: TeamsMessage): void {
  expect(messageBytes(message)).toBeLessThanOrEqual(TEAMS_LIMITS.budgetBytes);
  walk(message, (node) => {
    // Markdown is parsed in TextBlock and FactSet; kaiawatch uses neither, only TextRuns.
    expect(["TextBlock", "FactSet"]).not.toContain(node.type);
    if (node.type === "TextRun") {
      const text = node.text as string;
      expect(text).not.toMatch(INVISIBLE_OR_BIDI);
      expect(text).not.toMatch(LONE_SURROGATE);
      expect(text).not.toMatch(/[\r\n]/);
      expect(text).not.toContain("{{");
    }
    if (typeof node.url === "string") expect(node.url).toMatch(/^https:\/\/kaiascan\.io\/(tx|block|nft|account)\//);
  });
}

describe("Microsoft Teams sink (Workflows webhook, Adaptive Card)", () => {
  it("posts an Adaptive Card the receiver accepts, with the alert's fields and the explorer links as buttons", async () => {
    const r = await teams();
    const sink = createTeamsSink(createTestCommon(), "room", { url: `${r.url}/workflows/abc/triggers/manual/paths/invoke?sig=SECRET` });
    const alert = nftAlert({ summary: "Transfer of NFT #7" }, "Kaia Punks");
    await sink.send(deliveryOf(alert), signal);
    expect(r.requests).toHaveLength(1);
    expect(teamsProblems(r.requests[0]!)).toEqual([]);
    const message = JSON.parse(r.requests[0]!.body) as TeamsMessage;
    expect(message.type).toBe("message");
    expect(message.attachments[0]).toMatchObject({ contentType: "application/vnd.microsoft.card.adaptive", contentUrl: null, content: { type: "AdaptiveCard", version: "1.4" } });
    const card = message.attachments[0].content;
    const texts = card.body.map((block) => block.inlines.map((inline) => inline.text).join(""));
    expect(texts[0]).toBe("🔔 collection-feed");
    expect(texts[1]).toBe("Transfer of NFT #7");
    expect(texts).toContain("From: 0x1111111111111111111111111111111111111111");
    expect(texts.some((t) => t.startsWith("token: Kaia Punks (Kaia Punks) — 0x5c74"))).toBe(true);
    expect(card.actions?.map((a) => a.title)).toEqual(["Transaction", "Block", "Contract"]);
    checkDefused(message);
  });

  it("says FIRING and RESOLVED in the title, red then green", () => {
    const firing = buildTeamsMessage(deliveryOf(nftAlert({ id: "kw_ep", rule: "hot-wallet-low", status: "firing" }))).attachments[0].content.body[0]!.inlines[0];
    const resolved = buildTeamsMessage(deliveryOf(nftAlert({ id: resolvedAlertId("kw_ep"), rule: "hot-wallet-low", status: "resolved" }))).attachments[0].content.body[0]!.inlines[0];
    expect(firing).toMatchObject({ text: "🔔 FIRING: hot-wallet-low", color: "Attention", weight: "Bolder" });
    expect(resolved).toMatchObject({ text: "✅ RESOLVED: hot-wallet-low", color: "Good" });
  });

  it("defuses hostile token names: no markdown element, no date function, no link but the explorer's", async () => {
    const r = await teams();
    const sink = createTeamsSink(createTestCommon(), "room", { url: r.url });
    const hostile = nftAlert({ summary: `Transfer of ${CARD_MARKUP}` }, CARD_HOSTILE);
    await sink.send(deliveryOf(hostile), signal);
    await sink.send(digest(20, CARD_HOSTILE), signal);
    expect(r.requests.map((req: Received) => teamsProblems(req))).toEqual([[], []]);
    for (const req of r.requests) checkDefused(JSON.parse(req.body) as TeamsMessage);
    // The text is still all there, as text: the reader sees what the token calls itself.
    const summary = (JSON.parse(r.requests[0]!.body) as TeamsMessage).attachments[0].content.body[1]!.inlines[0]!.text;
    expect(summary).toContain("[spoof](https://kaiascan.io.evil.example/tx)");
    expect(summary).toContain("{ {DATE(2017-02-14T06:00:00Z, SHORT)}}");
    expect(summary).toContain("{ { {TIME(");
  });

  it("stays under the size budget with huge and non-ASCII text, leaving out whole lines and saying so", () => {
    // Four UTF-8 bytes a character: 20 digest lines of them are more than the budget.
    const wide = "😀".repeat(5000);
    const alert = nftAlert({ summary: wide }, wide);
    alert.enrichment = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`lookup${i}`, { name: wide, contract_address: `0x${String(i).repeat(40)}` }]));
    const single = buildTeamsMessage(deliveryOf(alert));
    checkDefused(single);
    const big = buildTeamsMessage(digest(20, wide));
    checkDefused(big);
    const texts = big.attachments[0].content.body.map((block) => block.inlines.map((inline) => inline.text).join(""));
    expect(texts[1]).toMatch(/^20 NFT transfers for rule collection-feed .*; first \d+ shown$/);
    expect(texts.length - 2).toBeLessThan(20);
  });

  it("treats 202 as delivered, 429 and 5xx as retryable, 400 as permanent, never quoting the URL", async () => {
    let answer = 429;
    const r = await teams((res) => {
      if (answer === 202) return false;
      res.statusCode = answer;
      if (answer === 429) res.setHeader("retry-after", "2");
      res.end(answer === 400 ? "bad request" : "throttled");
      return true;
    });
    const url = `${r.url}/workflows/abc/triggers/manual/paths/invoke?sig=SUPERSECRETSIG`;
    const sink = createTeamsSink(createTestCommon(), "room", { url });
    const send = async () => {
      try {
        await sink.send(deliveryOf(nftAlert()), signal);
      } catch (error) {
        if (error instanceof SinkError) return error;
        throw error;
      }
      return undefined;
    };
    expect(await send()).toMatchObject({ permanent: false, retryAfterMs: 2000 });
    answer = 500;
    expect((await send())?.permanent).toBe(false);
    answer = 400;
    const bad = await send();
    expect(bad?.permanent).toBe(true);
    expect(bad?.message).not.toContain("SUPERSECRETSIG");
    answer = 202;
    expect(await send()).toBeUndefined();
  });

  it("refuses a URL that is not https (but for this machine) and registers it as a secret", () => {
    const common = createTestCommon();
    expect(() => createTeamsSink(common, "room", { url: "http://example.com/hook" })).toThrow(SinkConfigError);
    const url = "https://prod-00.westeurope.logic.azure.com/workflows/1/triggers/manual/paths/invoke?sig=abcdef123456";
    createTeamsSink(common, "room", { url });
    expect(common.secrets.redact(`posting to ${url}`)).not.toContain("sig=abcdef123456");
  });
});
