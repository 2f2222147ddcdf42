import { truncate } from "./text.js";

/**
 * Sanitizing of text that strangers wrote on chain (token names, NFT metadata, revert
 * messages) before anyone reads it: sinks, the terminal, logs. It lives below every layer
 * because rules (`explain`), the CLI and notify all show on-chain text.
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

/** Sanitized, one line, cut to `max` code points: the usual treatment of one on-chain value. */
export function cleanLine(s: string, max: number): string {
  return truncate(sanitizeText(s, { singleLine: true }), max);
}

/** On-chain text quoted in a message (a config error, a terminal line): sanitized, one line, cut, then quoted. */
export function quotedText(s: string, max = 40): string {
  return JSON.stringify(cleanLine(s, max));
}
