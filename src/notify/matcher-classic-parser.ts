import { LONE_SURROGATE, MatcherError, SPACE, newMatcher, type MatchType, type Matcher } from "./matcher.js";

/*
 * Alertmanager's classic matcher parser (the grammar of its pkg/labels/parse.go, written anew):
 * Prometheus label names, values bare or double-quoted with OpenMetrics escapes, commas that
 * split outside quotes. Its messages are the ones Alertmanager prints.
 */

// Go's \s is ASCII whitespace; the name is a Prometheus classic label name (colons allowed).
const CLASSIC_MATCHER = /^[\t\n\f\r ]*([a-zA-Z_:][a-zA-Z0-9_:]*)[\t\n\f\r ]*(=~|=|!=|!~)[\t\n\f\r ]*([^]*?)[\t\n\f\r ]*$/;

/** A line of matchers: one optional brace each side, comma separated, a trailing comma allowed. */
export function classicMatchers(input: string): Matcher[] {
  // One optional brace each side; commas split outside double quotes (a \" does not open or close).
  let text = input.startsWith("{") ? input.slice(1) : input;
  if (text.endsWith("}")) text = text.slice(0, -1);
  const parts: string[] = [];
  let part = "";
  let quoted = false;
  let escaped = false;
  for (const char of text) {
    if (char === "," && !quoted) {
      parts.push(part);
      part = "";
      continue;
    }
    if (char === '"') {
      if (escaped) escaped = false;
      else quoted = !quoted;
    } else if (char === "\\") escaped = !escaped;
    else escaped = false;
    part += char;
  }
  // Only the last part may be empty (a trailing comma); an empty part before it is refused.
  const last = trimSpace(part);
  if (last !== "") parts.push(last);
  return parts.map(classicMatcher);
}

/** One matcher: `name op value` with spaces around. */
export function classicMatcher(text: string): Matcher {
  const match = CLASSIC_MATCHER.exec(text);
  if (!match) throw new MatcherError(`bad matcher format: ${text}`);
  const [, name, type, raw] = match as unknown as [string, string, MatchType, string];
  if (LONE_SURROGATE.test(raw)) throw new MatcherError(`matcher value not valid UTF-8: ${raw}`);
  // OpenMetrics escapes (\", \\, \n); any other backslash, or one at the end, is itself.
  const body = raw.startsWith('"') ? raw.slice(1) : raw;
  let expectClosingQuote = raw.startsWith('"');
  let value = "";
  let escaped = false;
  for (let i = 0; i < body.length; i++) {
    const char = body[i] as string;
    if (escaped) {
      escaped = false;
      value += char === "n" ? "\n" : char === '"' || char === "\\" ? char : `\\${char}`;
    } else if (char === "\\") {
      if (i < body.length - 1) escaped = true;
      else value += "\\";
    } else if (char === '"') {
      if (!expectClosingQuote || i < body.length - 1) throw new MatcherError(`matcher value contains unescaped double quote: ${raw}`);
      expectClosingQuote = false;
    } else value += char;
  }
  if (expectClosingQuote) throw new MatcherError(`matcher value contains unescaped double quote: ${raw}`);
  return newMatcher(type, name, value);
}

function trimSpace(text: string): string {
  const chars = [...text];
  let start = 0;
  let end = chars.length;
  while (start < end && SPACE.test(chars[start] as string)) start++;
  while (end > start && SPACE.test(chars[end - 1] as string)) end--;
  return chars.slice(start, end).join("");
}

