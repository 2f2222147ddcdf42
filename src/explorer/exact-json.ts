/**
 * JSON.parse turns 123456789012345678901.123456789012345678 into a float and Node 20 has no
 * access to the source text from a reviver, so the keys that hold exact amounts have their
 * bare numeric values rewritten into strings in the raw text before parsing.
 */
export const EXACT_KEYS = ["amount", "total_supply", "token_count", "burn_amount", "token_id"] as const;

/**
 * A key from EXACT_KEYS, a colon, and a complete JSON number. Why this cannot touch text
 * inside a string value: the match is used only when the key's opening quote follows `{` or
 * `,` (whitespace aside). That quote is then unescaped, so it either opens a string, which
 * makes the match a real key, or closes one, which leaves the key name as a bare word: the
 * text is invalid JSON before and after the rewrite, and parsing fails.
 */
const KEYED_NUMBER = new RegExp(`"(?:${EXACT_KEYS.join("|")})"\\s*:\\s*(-?(?:0|[1-9]\\d*)(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)(?=\\s*[,}\\]])`, "g");

/** An exponent this far out would build an absurdly long string; no real amount needs it. */
const MAX_EXPONENT = 400;

export class ExactNumberError extends Error {
  override name = "ExactNumberError";
}

/** Rewrites the bare numbers of EXACT_KEYS into exact plain decimal strings. */
export function quoteExactNumbers(text: string): string {
  KEYED_NUMBER.lastIndex = 0;
  let out = "";
  let copied = 0;
  for (let match = KEYED_NUMBER.exec(text); match !== null; match = KEYED_NUMBER.exec(text)) {
    if (!followsObjectStart(text, match.index)) continue;
    const literal = match[1] as string;
    const start = match.index + match[0].length - literal.length;
    const plain = toPlainDecimal(literal);
    if (plain === undefined) throw new ExactNumberError(`number out of range: ${literal.slice(0, 40)}`);
    out += `${text.slice(copied, start)}"${plain}"`;
    copied = start + literal.length;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * How deep an answer's maps and lists may nest. The API's deepest answer nests about 6
 * levels; JSON.parse itself copes with any depth, but whatever walks the value afterwards
 * recursively (JSON.stringify into the outbox, the rules) overflows the stack near 10,000
 * levels, and a source whose every tick dies that way is stalled without a word.
 */
export const MAX_JSON_DEPTH = 64;

export class JsonTooDeepError extends Error {
  override name = "JsonTooDeepError";
}

/** JSON.parse after quoteExactNumbers, refusing an answer nested deeper than MAX_JSON_DEPTH. */
export function parseExactJson(text: string): unknown {
  checkDepth(text);
  return JSON.parse(quoteExactNumbers(text));
}

/**
 * One pass over the text, before it is parsed: brackets inside strings do not count, and
 * a string is skipped with indexOf (most of a page is strings: hashes, addresses), so the
 * pass costs little beside JSON.parse (bench/record-caps.bench.ts). Text that is not
 * valid JSON may be miscounted; JSON.parse refuses it next anyway.
 */
function checkDepth(text: string): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return;
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > MAX_JSON_DEPTH) throw new JsonTooDeepError(`nested deeper than ${MAX_JSON_DEPTH} levels (at character ${i})`);
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function escaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let i = at - 1; i >= 0 && text.charCodeAt(i) === 0x5c; i--) backslashes++;
  return backslashes % 2 === 1;
}

function followsObjectStart(text: string, index: number): boolean {
  let i = index - 1;
  let c = text.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(--i);
  return c === 0x7b /* { */ || c === 0x2c /* , */;
}

const PLAIN = /^-?\d+(?:\.\d+)?$/;
const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * A decimal number's text as plain decimal without exponent, exactly: "1e21" →
 * "1000000000000000000000", "-1.5E-3" → "-0.0015". Plain input is returned unchanged.
 * Undefined when the text is not a number or its exponent is beyond ±400.
 */
export function toPlainDecimal(text: string): string | undefined {
  if (PLAIN.test(text)) return text;
  const m = NUMBER.exec(text);
  if (m === null) return undefined;
  const sign = m[1] as string;
  const intPart = m[2] as string;
  const fracPart = m[3] ?? "";
  const exponent = Number(m[4] ?? "0");
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > MAX_EXPONENT) return undefined;
  const digits = intPart + fracPart;
  const point = intPart.length + exponent;
  let whole: string;
  let fraction: string;
  if (point <= 0) {
    whole = "0";
    fraction = "0".repeat(-point) + digits;
  } else if (point >= digits.length) {
    whole = digits + "0".repeat(point - digits.length);
    fraction = "";
  } else {
    whole = digits.slice(0, point);
    fraction = digits.slice(point);
  }
  whole = whole.replace(/^0+(?=\d)/, "");
  fraction = fraction.replace(/0+$/, "");
  const body = fraction === "" ? whole : `${whole}.${fraction}`;
  return /^[0.]*$/.test(body) ? "0" : sign + body;
}
