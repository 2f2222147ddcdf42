import type { Common } from "../../common/common.js";
import type { Delivery, Sink } from "../sink.js";
import type { SinkConfigProblem } from "../errors.js";
import { escapeTelegramHtml as esc, truncateUnits } from "../escape.js";
import { DIGEST_SHOWN, alertView, digestHeadline, digestLine, isDigest } from "../alert-view.js";
import { takeLines } from "../fit.js";
import { createHttpSender, type HttpSender } from "../http-sender.js";
import { checkTimeout, checkUrl, throwIfProblems } from "../sink-checks.js";

export interface TelegramOptions {
  /** The bot token from @BotFather: a secret, never logged. */
  bot_token: string;
  chat_id: string | number;
  /** https://api.telegram.org by default. */
  api_url?: string;
  /** Milliseconds; 10 s by default. */
  timeout?: number;
}

export const TELEGRAM_LIMITS = { text: 4096 } as const;

export interface TelegramMessage {
  chat_id: string | number;
  text: string;
  parse_mode: "HTML";
  disable_web_page_preview: true;
  link_preview_options: { is_disabled: true };
}

const DEFAULT_API_URL = "https://api.telegram.org";
const DEFAULT_TIMEOUT_MS = 10_000;

export function validateTelegramOptions(options: TelegramOptions): SinkConfigProblem[] {
  const problems: SinkConfigProblem[] = [];
  // The token goes into the URL path: anything but the documented shape could change the path.
  if (typeof options.bot_token !== "string" || !/^[0-9]+:[A-Za-z0-9_-]+$/.test(options.bot_token)) {
    problems.push({ key: "bot_token", message: "must look like 123456789:AA… (digits, a colon, letters, digits, _ and -)" });
  }
  if (!(typeof options.chat_id === "number" && Number.isInteger(options.chat_id)) && !(typeof options.chat_id === "string" && /^(-?[0-9]+|@[A-Za-z0-9_]{5,})$/.test(options.chat_id))) {
    problems.push({ key: "chat_id", message: "must be a numeric chat id or @channelusername" });
  }
  if (options.api_url !== undefined) checkUrl(problems, "api_url", options.api_url, { allowLoopbackHttp: true });
  checkTimeout(problems, "timeout", options.timeout);
  return problems;
}

function anchor(url: string, text: string): string {
  return `<a href="${esc(url)}">${esc(text)}</a>`;
}

/** The sendMessage payload of a delivery: pure; every line is whole HTML, so cutting lines never breaks markup. */
export function buildTelegramMessage(delivery: Delivery, chatId: string | number): TelegramMessage {
  const max = TELEGRAM_LIMITS.text;
  let text: string;
  const title = `<b>🔔 ${truncateUnits(esc(delivery.rule), 300)}</b>`;
  if (!isDigest(delivery)) {
    const alert = delivery.alerts[0]!;
    const view = alertView(alert);
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

export function createTelegramSink(common: Common, name: string, options: TelegramOptions, sender: HttpSender = createHttpSender(common)): Sink {
  throwIfProblems(name, validateTelegramOptions(options));
  common.secrets.add(options.bot_token);
  const url = `${(options.api_url ?? DEFAULT_API_URL).replace(/\/+$/, "")}/bot${options.bot_token}/sendMessage`;
  const target = `sink ${name} (telegram)`;
  return {
    name,
    type: "telegram",
    async send(delivery, signal) {
      const body = JSON.stringify(buildTelegramMessage(delivery, options.chat_id));
      await sender.postJson({ url, body, timeoutMs: options.timeout ?? DEFAULT_TIMEOUT_MS, target, secrets: [options.bot_token] }, signal);
    },
  };
}
