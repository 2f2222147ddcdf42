import { z } from "zod";
import type { Common } from "../../common/common.js";
import { baseUrl } from "../../common/value-schemas.js";
import type { Delivery, Sink } from "../sink.js";
import type { SinkConfigProblem } from "../errors.js";
import { escapeTelegramHtml as esc, truncateUnits } from "../escape.js";
import { DIGEST_SHOWN, alertTitle, alertView, digestHeadline, digestLine, isDigest } from "../alert-view.js";
import { takeLines } from "../fit.js";
import type { HttpSender } from "../http-sender.js";
import { checkUrl } from "../sink-checks.js";
import { defineSink } from "./define-sink.js";
import { createJsonPostSink } from "./json-post-sink.js";

const telegramOptions = z.strictObject({
  allow_private_network: z.boolean().optional().meta({ description: "Send to a link-local or cloud metadata address (169.254.0.0/16, fe80::/10, metadata.google.internal …), refused otherwise. Default false." }),
  /** The bot token from @BotFather: a secret, never logged. */
  bot_token: z.string().regex(/^[0-9]+:[A-Za-z0-9_-]+$/, 'not a Telegram bot token ("123456:ABC…")').meta({ description: "Secret." }),
  chat_id: z.union([z.string().min(1), z.int()], { error: 'expected a chat id ("-100123…" or "@channel")' }).transform(String),
  api_url: baseUrl.default("https://api.telegram.org"),
  // Accepted and documented, but the message layout does not use it (yet).
  text: z.string().optional(),
});

export type TelegramOptions = z.output<typeof telegramOptions>;

export const TELEGRAM_LIMITS = { text: 4096 } as const;

export interface TelegramMessage {
  chat_id: string | number;
  text: string;
  parse_mode: "HTML";
  disable_web_page_preview: true;
  link_preview_options: { is_disabled: true };
}

export function validateTelegramOptions(options: TelegramOptions): SinkConfigProblem[] {
  const problems: SinkConfigProblem[] = [];
  // The token goes into the URL path: anything but the documented shape could change the path.
  if (typeof options.bot_token !== "string" || !/^[0-9]+:[A-Za-z0-9_-]+$/.test(options.bot_token)) {
    problems.push({ key: "bot_token", message: "must look like 123456789:AA… (digits, a colon, letters, digits, _ and -)" });
  }
  if (!(typeof options.chat_id === "number" && Number.isInteger(options.chat_id)) && !(typeof options.chat_id === "string" && /^(-?[0-9]+|@[A-Za-z0-9_]{5,})$/.test(options.chat_id))) {
    problems.push({ key: "chat_id", message: "must be a numeric chat id or @channelusername" });
  }
  checkUrl(problems, "api_url", options.api_url, { allowLoopbackHttp: true, allowPrivateNetwork: options.allow_private_network });
  return problems;
}

function anchor(url: string, text: string): string {
  return `<a href="${esc(url)}">${esc(text)}</a>`;
}

/** The sendMessage payload of a delivery: pure; every line is whole HTML, so cutting lines never breaks markup. */
export function buildTelegramMessage(delivery: Delivery, chatId: string | number): TelegramMessage {
  const max = TELEGRAM_LIMITS.text;
  let text: string;
  let title = `<b>🔔 ${truncateUnits(esc(delivery.rule), 300)}</b>`;
  if (!isDigest(delivery)) {
    const alert = delivery.alerts[0]!;
    const view = alertView(alert);
    title = `<b>${truncateUnits(esc(alertTitle(view)), 320)}</b>`;
    const footer = [
      view.links.map((l) => anchor(l.url, l.label)).join(" · "),
      `<i>${esc([alert.watch, alert.source, alert.network, view.datetime].filter((x) => x != null).join(" · "))}</i>`,
    ].filter((s) => s !== "");
    const head = [title, truncateUnits(esc(view.summary), 1500), ""];
    const reserve = [...head, "", ...footer].join("\n").length + 1;
    const fields = takeLines(view.fields.map((f) => `<b>${esc(f.label)}:</b> ${esc(f.value)}`), max, reserve);
    text = [...head, ...fields, "", ...footer].join("\n");
  } else {
    const lines = delivery.alerts.slice(0, DIGEST_SHOWN).map((alert) => {
      const line = digestLine(alert);
      return `• ${esc(line.text)}${line.url === undefined ? "" : ` ${anchor(line.url, "tx")}`}`;
    });
    // Reserve the headline as it reads with every line shown; fewer shown never makes it longer by more than the margin.
    const headlineMax = Math.min(600, esc(digestHeadline(delivery, lines.length)).length + 8);
    const shown = takeLines(lines, max, title.length + 3 + headlineMax);
    text = [title, truncateUnits(esc(digestHeadline(delivery, shown.length)), headlineMax), "", ...shown].join("\n");
  }
  return { chat_id: chatId, text, parse_mode: "HTML", disable_web_page_preview: true, link_preview_options: { is_disabled: true } };
}

export function createTelegramSink(common: Common, name: string, options: TelegramOptions, sender?: HttpSender): Sink {
  const problems = validateTelegramOptions(options);
  const url = `${options.api_url.replace(/\/+$/, "")}/bot${options.bot_token}/sendMessage`;
  return createJsonPostSink(common, { name, type: "telegram", problems, url, secret: options.bot_token, documents: (delivery) => [buildTelegramMessage(delivery, options.chat_id)] }, sender);
}

export const telegramSink = defineSink({
  type: "telegram",
  options: telegramOptions,
  defaultRatePerSecond: 1,
  check: validateTelegramOptions,
  create: createTelegramSink,
  preview: (delivery, options) => buildTelegramMessage(delivery, options.chat_id).text,
  secretKeys: ["bot_token"],
});
