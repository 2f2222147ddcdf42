import { LONE_SURROGATE, MatcherError, RESERVED, SPACE, newMatcher, type MatchType, type Matcher } from "./matcher.js";

/*
 * Alertmanager's UTF-8 matcher parser (the grammar of its matcher/parse, written anew): names
 * and values bare (no reserved character) or double-quoted Go strings, so a label name may be
 * any UTF-8 text (`"service.name"=api`, `foo🙂=bar`); braces must pair. Only whether it accepts
 * an input matters: when both parsers refuse one, Alertmanager reports the classic parser's
 * message, and so does parseMatchers.
 */


type Token = { kind: "{" | "}" | "," | MatchType } | { kind: "quoted" | "unquoted"; text: string };

/** The tokens of the input; a character the grammar has no place for ends it with an error. */
function utf8Tokens(input: string): Token[] {
  const tokens: Token[] = [];
  const chars = [...input];
  let i = 0;
  const refuse = (): never => {
    throw new MatcherError(`${JSON.stringify(input)}: invalid input`);
  };
  while (i < chars.length) {
    const char = chars[i] as string;
    if (char === "{" || char === "}" || char === ",") {
      tokens.push({ kind: char });
      i++;
    } else if (char === "!") {
      const next = chars[i + 1];
      if (next !== "=" && next !== "~") refuse();
      tokens.push({ kind: next === "=" ? "!=" : "!~" });
      i += 2;
    } else if (char === "=") {
      const regex = chars[i + 1] === "~";
      tokens.push({ kind: regex ? "=~" : "=" });
      i += regex ? 2 : 1;
    } else if (char === '"') {
      let end = i + 1;
      while (end < chars.length && chars[end] !== '"') end += chars[end] === "\\" ? 2 : 1;
      if (end >= chars.length) refuse();
      tokens.push({ kind: "quoted", text: chars.slice(i, end + 1).join("") });
      i = end + 1;
    } else if (SPACE.test(char)) i++;
    else if (!RESERVED.test(char)) {
      let end = i;
      while (end < chars.length && !RESERVED.test(chars[end] as string)) end++;
      tokens.push({ kind: "unquoted", text: chars.slice(i, end).join("") });
      i = end;
    } else refuse();
  }
  return tokens;
}

/** A line of matchers in the UTF-8 grammar; throws a MatcherError when it is not one. */
export function utf8Matchers(input: string): Matcher[] {
  const tokens = utf8Tokens(input);
  const refuse = (): never => {
    throw new MatcherError(`${JSON.stringify(input)}: not matchers`);
  };
  let at = 0;
  const braced = tokens[0]?.kind === "{";
  if (braced) at++;
  const found: Matcher[] = [];
  // A matcher, then a comma or the end; after a comma, another matcher or the end.
  while (at < tokens.length && tokens[at]?.kind !== "}") {
    const [name, operator, value] = [tokens[at], tokens[at + 1], tokens[at + 2]];
    if (!isText(name) || !operator || !isOperator(operator.kind) || !isText(value)) refuse();
    found.push(newMatcher(operator?.kind as MatchType, utf8Text(name as TextToken, input), utf8Text(value as TextToken, input)));
    at += 3;
    if (tokens[at]?.kind === ",") at++;
    else if (at < tokens.length && tokens[at]?.kind !== "}") refuse();
  }
  // The closing brace is there exactly when the opening one was, and nothing follows it.
  const closed = tokens[at]?.kind === "}";
  if (closed !== braced || at + (closed ? 1 : 0) !== tokens.length) refuse();
  return found;
}

type TextToken = Extract<Token, { text: string }>;

function isText(token: Token | undefined): token is TextToken {
  return token?.kind === "quoted" || token?.kind === "unquoted";
}

function isOperator(kind: Token["kind"]): kind is MatchType {
  return kind === "=" || kind === "!=" || kind === "=~" || kind === "!~";
}

function utf8Text(token: TextToken, input: string): string {
  return token.kind === "unquoted" ? token.text : unquoteGo(token.text, input);
}

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, "\\": 92, '"': 34 };

/**
 * A double-quoted Go string literal's value (strconv.Unquote): \a \b \f \n \r \t \v \\ \",
 * \xHH and \OOO bytes, \uHHHH and \UHHHHHHHH code points; no raw line feed. The bytes must
 * be UTF-8, as the UTF-8 parser requires.
 */
function unquoteGo(literal: string, input: string): string {
  const refuse = (): never => {
    throw new MatcherError(`${JSON.stringify(input)}: ${literal}: invalid input`);
  };
  const body = literal.slice(1, -1);
  if (body.includes("\n")) refuse();
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  let i = 0;
  while (i < body.length) {
    const char = body.codePointAt(i) as number;
    if (char !== 0x5c) {
      const text = String.fromCodePoint(char);
      if (LONE_SURROGATE.test(text)) refuse();
      bytes.push(...encoder.encode(text));
      i += text.length;
      continue;
    }
    const kind = body[i + 1] ?? "";
    const simple = SIMPLE_ESCAPES[kind];
    if (simple !== undefined) {
      bytes.push(simple);
      i += 2;
    } else if (kind === "x" || kind === "u" || kind === "U") {
      const digits = kind === "x" ? 2 : kind === "u" ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + digits);
      if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) refuse();
      const code = Number.parseInt(hex, 16);
      if (kind === "x") bytes.push(code);
      else {
        if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) refuse();
        bytes.push(...encoder.encode(String.fromCodePoint(code)));
      }
      i += 2 + digits;
    } else if (/^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      const code = Number.parseInt(body.slice(i + 1, i + 4), 8);
      if (code > 255) refuse();
      bytes.push(code);
      i += 4;
    } else refuse();
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    return refuse();
  }
}

