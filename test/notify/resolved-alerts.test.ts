import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { episodeIdOf, reminderAlertId, resolvedAlertId } from "../../src/model/alert-status.js";
import { buildPagerDutyEvents, type PagerDutyTrigger } from "../../src/notify/sinks/pagerduty.js";
import type { Delivery } from "../../src/notify/sink.js";
import { buildSlackMessage } from "../../src/notify/sinks/slack.js";
import { buildDiscordMessage } from "../../src/notify/sinks/discord.js";
import { buildTelegramMessage } from "../../src/notify/sinks/telegram.js";
import { buildEmail } from "../../src/notify/sinks/email.js";
import { formatConsole } from "../../src/notify/sinks/console.js";
import { compileTemplate } from "../../src/notify/template.js";
import { createWebhookSink } from "../../src/notify/sinks/webhook.js";
import { startReceiver, type Receiver } from "./receiver.js";
import { HOSTILE_NAME, INVISIBLE_OR_BIDI, nftAlert } from "./fixtures.js";

const signal = new AbortController().signal;
let receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  receivers = [];
});

const EPISODE = "kw_0123456789abcdef0123456789abcdef";

/** The two alerts of one episode, as the alert's producer makes them: one id family. */
function episode(): { firing: AlertDocument; resolved: AlertDocument } {
  const firing = nftAlert({ id: EPISODE, rule: "hot-wallet-low", status: "firing", summary: `balance of ${HOSTILE_NAME} below 100 KAIA` });
  const resolved = nftAlert({ id: resolvedAlertId(EPISODE), rule: "hot-wallet-low", status: "resolved", summary: `balance of ${HOSTILE_NAME} back above 100 KAIA` });
  return { firing, resolved };
}

/** A single alert's delivery carries the alert's id, as the dispatcher sends it. */
const deliveryOf = (alert: AlertDocument): Delivery => ({ id: alert.id, rule: alert.rule, alerts: [alert], attempt: 1 });

describe("alerts with a lifecycle", () => {
  it("share one id family: the resolved alert's id is the episode id and ':resolved'", () => {
    const { firing, resolved } = episode();
    expect(resolved.id).toBe(`${EPISODE}:resolved`);
    expect(episodeIdOf(firing)).toBe(EPISODE);
    expect(episodeIdOf(resolved)).toBe(EPISODE);
    // A one-shot alert is its own episode, even if its id happened to end the same way.
    expect(episodeIdOf({ id: "x:resolved" })).toBe("x:resolved");
  });

  it("Slack, Discord, Telegram, email and the console say FIRING and RESOLVED; one-shot alerts read as before", () => {
    const { firing, resolved } = episode();
    const oneShot = nftAlert({ rule: "hot-wallet-low" });

    const slack = (alert: AlertDocument) => buildSlackMessage(deliveryOf(alert));
    expect(slack(firing).blocks[0]).toMatchObject({ type: "header", text: { text: "🔔 FIRING: hot-wallet-low" } });
    expect(slack(resolved).blocks[0]).toMatchObject({ type: "header", text: { text: "✅ RESOLVED: hot-wallet-low" } });
    expect(slack(resolved).text).toMatch(/^RESOLVED: hot-wallet-low: balance of /);
    expect(slack(oneShot).blocks[0]).toMatchObject({ type: "header", text: { text: "🔔 hot-wallet-low" } });

    const discord = (alert: AlertDocument) => buildDiscordMessage(deliveryOf(alert)).embeds[0]!;
    expect(discord(firing)).toMatchObject({ title: "🔔 FIRING: hot-wallet-low", color: 0xe01e5a });
    expect(discord(resolved)).toMatchObject({ title: "✅ RESOLVED: hot-wallet-low", color: 0x2eb67d });
    expect(discord(oneShot).color).toBeUndefined();

    const telegram = (alert: AlertDocument) => buildTelegramMessage(deliveryOf(alert), "-100123").text;
    expect(telegram(firing)).toMatch(/^<b>🔔 FIRING: hot-wallet-low<\/b>\n/);
    expect(telegram(resolved)).toMatch(/^<b>✅ RESOLVED: hot-wallet-low<\/b>\n/);
    expect(telegram(oneShot)).toMatch(/^<b>🔔 hot-wallet-low<\/b>\n/);

    const email = buildEmail(deliveryOf(resolved));
    expect(email.subject).toMatch(/^\[kaiawatch\] RESOLVED: hot-wallet-low: balance of /);
    expect(email.text).toMatch(/^Status: RESOLVED\nRule: hot-wallet-low\n/);
    expect(email.html).toContain('<h2 style="color:#1a7f37">✅ RESOLVED: hot-wallet-low</h2>');
    expect(buildEmail(deliveryOf(firing)).html).toContain('<h2 style="color:#cf222e">🔔 FIRING: hot-wallet-low</h2>');
    expect(buildEmail(deliveryOf(oneShot)).subject).toMatch(/^\[kaiawatch\] hot-wallet-low: /);

    expect(formatConsole(deliveryOf(resolved))).toMatch(/^\[kaiawatch\] RESOLVED: hot-wallet-low · /);

    // The hostile text is still only data wherever the status goes.
    for (const text of [JSON.stringify(slack(resolved)), JSON.stringify(discord(resolved)), telegram(resolved), email.html]) {
      expect(text).not.toMatch(INVISIBLE_OR_BIDI);
      expect(text).not.toContain("<!channel>");
      expect(text).not.toContain("<script>");
    }
    expect(email.subject).not.toMatch(/[\r\n]/);
  });

  it("templates see `status` (and nothing when an alert has none)", () => {
    const { resolved } = episode();
    const template = compileTemplate("{{#status}}[{{status}}] {{/status}}{{rule}}");
    expect(buildSlackMessage(deliveryOf(resolved), template).text).toBe("[resolved] hot-wallet-low");
    expect(buildSlackMessage(deliveryOf(nftAlert({ rule: "hot-wallet-low" })), template).text).toBe("hot-wallet-low");
  });

  it("digest lines say which alerts resolved", () => {
    const { firing, resolved } = episode();
    const digest: Delivery = { id: "grp_1", rule: "hot-wallet-low", alerts: [firing, resolved], attempt: 1 };
    const lines = buildTelegramMessage(digest, "-100123").text.split("\n");
    expect(lines.filter((line) => line.startsWith("• FIRING: balance of"))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("• RESOLVED: balance of"))).toHaveLength(1);
    expect(buildEmail(digest).text).toContain("- RESOLVED: balance of");
  });

  it("webhooks carry `status` in the alert document, under the episode's id family", async () => {
    const r = await startReceiver((res) => {
      res.statusCode = 204;
      res.end();
    });
    receivers.push(r);
    const sink = createWebhookSink(createTestCommon(), "audit", { url: r.url, headers: {}, timeout: 10_000, allow_http: true });
    const { firing, resolved } = episode();
    await sink.send(deliveryOf(firing), signal);
    await sink.send(deliveryOf(resolved), signal);
    const bodies = r.requests.map((req) => JSON.parse(req.body) as AlertDocument);
    expect(bodies.map((b) => [b.id, b.status])).toEqual([
      [EPISODE, "firing"],
      [`${EPISODE}:resolved`, "resolved"],
    ]);
    expect(r.requests.map((req) => req.headers["webhook-id"])).toEqual([EPISODE, `${EPISODE}:resolved`]);
  });

  it("a reminder says so in every chat and email sink, keeps the episode for PagerDuty, and belongs to the episode by episode_id", () => {
    const reminder = nftAlert({ id: reminderAlertId(EPISODE, 2), rule: "hot-wallet-low", status: "firing", episode_id: EPISODE, repeat: 2, summary: "balance of 0x… still below 100 KAIA" });
    expect(episodeIdOf(reminder)).toBe(`${EPISODE}`);
    expect(buildSlackMessage(deliveryOf(reminder)).blocks[0]).toMatchObject({ type: "header", text: { text: "🔔 FIRING (reminder 2): hot-wallet-low" } });
    expect(buildSlackMessage(deliveryOf(reminder)).text).toMatch(/^FIRING \(reminder 2\): hot-wallet-low: /);
    // Discord's markdown escaping shows the parentheses as they are.
    expect(buildDiscordMessage(deliveryOf(reminder)).embeds[0]).toMatchObject({ title: "🔔 FIRING \\(reminder 2\\): hot-wallet-low" });
    expect(buildTelegramMessage(deliveryOf(reminder), "-100123").text).toMatch(/^<b>🔔 FIRING \(reminder 2\): hot-wallet-low<\/b>\n/);
    const email = buildEmail(deliveryOf(reminder));
    expect(email.subject).toMatch(/^\[kaiawatch\] FIRING \(reminder 2\): hot-wallet-low: /);
    expect(email.text).toMatch(/^Status: FIRING \(reminder 2\)\nRule: hot-wallet-low\n/);
    expect(formatConsole(deliveryOf(reminder))).toMatch(/^\[kaiawatch\] FIRING \(reminder 2\): hot-wallet-low · /);
    // PagerDuty: the reminder lands on the incident its first trigger opened.
    const [event] = buildPagerDutyEvents(deliveryOf(reminder), { routing_key: "0123456789abcdef0123456789abcdef", severity: "error" }) as PagerDutyTrigger[];
    expect(event).toMatchObject({ event_action: "trigger", dedup_key: EPISODE, payload: { summary: expect.stringMatching(/^FIRING \(reminder 2\): hot-wallet-low: /), custom_details: { reminder: 2, "episode id": EPISODE } } });
  });
});
