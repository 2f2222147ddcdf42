import { ELLIPSIS, truncate } from "../common/text.js";
/**
 * Sanitizing and escaping of text that strangers wrote on chain (token names, NFT metadata,
 * revert messages) before it reaches a sink. Every escaper below sanitizes first, so any path
 * through it removes invisible and direction-changing characters before markup is escaped.
 *
 * Policy of `sanitizeText`:
 * - bidi controls (U+202A–202E, U+2066–2069, U+200E/F, U+061C) and control characters
 *   (C0 except \n and \t, DEL, C1) are made VISIBLE as `<U+202E>`: a spoofing attempt is
 *   worth seeing, and the marker cannot reorder or hide anything;
 * - invisible characters (zero-width U+200B–200D, U+2060, U+FEFF, soft hyphen, invisible
 *   operators U+2061–2064, interlinear annotations U+FFF9–FFFB, Hangul fillers, and Unicode
 *   tag characters U+E0000–E007F that can smuggle hidden text) are REMOVED: they carry no
 *   meaning a reader could see, and removing them makes look-alike names compare equal;
 * - lone surrogates become U+FFFD, so every payload is valid UTF-8/JSON;
 * - CR LF and lone CR become LF; U+2028/2029 become LF; with `singleLine`, every line break
 *   and tab becomes one space.
 */

const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;
// C0 except \t and \n (handled separately), DEL and C1.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
const INVISIBLE = /[\u200B-\u200D\u2060-\u2064\uFEFF\u00AD\u115F\u1160\u3164\uFFA0\uFFF9-\uFFFB]|\uDB40[\uDC00-\uDC7F]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function visible(ch: string): string {
  return `<U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`;
}

export interface SanitizeOptions {
  /** Replace line breaks and tabs by a space (headers, titles, one-line fields). */
  singleLine?: boolean;
}

export function sanitizeText(input: string, options: SanitizeOptions = {}): string {
  let s = input
    .replace(LONE_SURROGATE, "\uFFFD")
    .replace(INVISIBLE, "")
    .replace(/\r\n?|[\u2028\u2029]/g, "\n");
  if (options.singleLine) s = s.replace(/[\n\t]+/g, " ");
  return s.replace(CONTROL, visible).replace(BIDI, visible);
}

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

/** Sanitized, one line, cut to `max` code points: the usual treatment of one on-chain value. */
export function cleanLine(s: string, max: number): string {
  return truncate(sanitizeText(s, { singleLine: true }), max);
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
