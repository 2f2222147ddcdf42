import { ELLIPSIS, truncate } from "../common/text.js";
import { sanitizeText } from "../common/sanitize-text.js";
/**
 * Escaping of on-chain text for each sink. Every escaper below sanitizes first
 * (`sanitizeText` in src/common/sanitize-text.ts), so any path through it removes invisible
 * and direction-changing characters before markup is escaped.
 */

// Re-exported: the sinks take all their text helpers from here.
export { ELLIPSIS, truncate };

/**
 * Cut `s` to at most `maxUnits` UTF-16 code units (what JavaScript's `length`, Telegram and
 * Discord count; never less than the code points), never splitting a surrogate pair, and
 * never cutting an HTML/Slack entity such as `&amp;` in half.
 */
export function truncateUnits(s: string, maxUnits: number): string {
  if (s.length <= maxUnits) return s;
  if (maxUnits <= 0) return "";
  let end = maxUnits - ELLIPSIS.length;
  if (end > 0 && /[\uD800-\uDBFF]/.test(s.charAt(end - 1))) end -= 1;
  let head = s.slice(0, Math.max(0, end));
  const amp = head.lastIndexOf("&");
  if (amp >= 0 && amp >= head.length - 10 && !head.slice(amp).includes(";")) head = head.slice(0, amp);
  return head + ELLIPSIS;
}

export type Escaper = (s: string) => string;

/**
 * Slack mrkdwn: `&`, `<` and `>` become entities, which defuses `<!channel>`, `<!here>`,
 * `<@U…>` mentions and spoofed `<http://x|y>` links. Formatting characters (`*_~` and the
 * backtick) are left alone: Slack has no escape for them, and at worst they change emphasis.
 */
export function escapeSlack(s: string): string {
  return sanitizeText(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Discord markdown: every markdown-significant character gets a backslash (Discord drops the
 * backslash when rendering), which defuses masked links `[x](y)`, `<@id>`/`<#id>`/`<t:…>`
 * syntax, emphasis, spoilers and code; `@` is escaped too so that `@everyone` and `@here`
 * show as text. Heading, list and subtext markers (`#`, `-`, `+`, `1.`) only mean something
 * at the start of a line, so only there are they escaped. Messages also carry
 * `allowed_mentions: { parse: [] }`.
 */
export function escapeDiscord(s: string): string {
  return sanitizeText(s)
    .replace(/[\\*_~`|>[\]()<@]/g, "\\$&")
    .replace(/^([ \t]*)([#+-]|\d+\.)/gm, (_m, space: string, marker: string) => `${space}${marker.replace(/[#+.-]/, "\\$&")}`);
}

/**
 * Text of an Adaptive Card TextRun (Microsoft Teams). kaiawatch puts text only in TextRuns,
 * whose text the Adaptive Card schema renders without markdown, so `[x](url)`, `**`, list
 * markers and HTML stay literal and need no backslashes (which a TextRun would show). What a
 * TextRun does interpret are the `{{DATE(…)}}` and `{{TIME(…)}}` functions: every `{{` gets a
 * space between its braces, so on-chain text cannot turn into a date that was never written.
 */
export function escapeAdaptiveText(s: string): string {
  return sanitizeText(s).replace(/\{(?=\{)/g, "{ ");
}

/** Telegram HTML parse mode: the four entities Telegram knows. */
export function escapeTelegramHtml(s: string): string {
  return sanitizeText(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Full HTML escaping, safe in element content and in quoted attributes. */
export function escapeHtml(s: string): string {
  return sanitizeText(s)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** An email header value: one line (no CR/LF can inject a header), cut to `max` code points. */
export function sanitizeHeader(s: string, max = 200): string {
  return truncate(sanitizeText(s, { singleLine: true }).trim(), max);
}

/** Plain text for consoles and text email parts: sanitized, nothing else. */
export function escapePlain(s: string): string {
  return sanitizeText(s);
}

/**
 * A URL we are willing to put behind a link: http(s), no whitespace, quotes or characters
 * that end a Slack link or an HTML attribute. Links are built by kaiawatch from the
 * configured explorer URL, but are checked again here because the check costs nothing.
 */
export function safeUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  return /^https?:\/\/[A-Za-z0-9\-._~:/?#@!$&*+,;=%]+$/.test(url) ? url : undefined;
}
