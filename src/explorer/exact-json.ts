/**
 * JSON.parse turns 123456789012345678901.123456789012345678 into a float and Node 20 has no
 * access to the source text from a reviver, so the keys that hold exact amounts have their
 * bare numeric values rewritten into strings in the raw text before parsing. Each key in both
 * of the explorer's spellings (spelling.ts): camelCase answers are renamed after parsing.
 */
export const EXACT_KEYS = ["amount", "total_supply", "token_count", "burn_amount", "token_id", "totalSupply", "tokenCount", "burnAmount", "tokenId"] as const;

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
  return readExactJson(text).value;
}

/** A parsed answer and what the pass before parsing saw of its text. */
export interface ExactJson {
  value: unknown;
  /** How deep its maps and lists nest (the outermost counts 1). */
  depth: number;
  /** The longest string (key or value) as written in the text, escapes counted: never shorter than the string read. */
  longestString: number;
}

/**
 * parseExactJson, also saying how deep the answer nests and how long its longest string is,
 * so that the caller can tell whether any record in it could need cutting (record-limits.ts).
 */
export function readExactJson(text: string): ExactJson {
  const scan = scanJson(text);
  return { value: parseScanned(text, scan), depth: scan.depth, longestString: scan.longestString };
}

/**
 * Where a record's own keys sit: {"results":[{"token_count":1}]} has the record's map at
 * depth 3. A quoted number of a record of a list answer is there.
 */
const RECORD_DEPTH = 3;

/**
 * JSON.parse of the scanned text. A page of NFT transfers carries token_count as a bare
 * number on every record, so its text was rewritten, and building the rewritten text (a
 * new string as long as the page) cost more than parsing it (bench/ingest.bench.ts: the
 * 25 pages of a run took 158 ms of CPU to read against JSON.parse's 37 ms, now 62 ms; on
 * the benchmark's VM a fresh large string is mostly page faults). When every quoted number
 * is a plain whole number JSON.parse holds exactly (its text is the number's own String())
 * and sits in a map at RECORD_DEPTH, and no key can be written with escapes (the text has
 * no backslash), the original text is parsed and those values are turned into their text
 * in place: the same value as parsing the rewritten text. The count must agree (a key
 * repeated in a map, whose earlier value JSON.parse drops, makes it disagree; so do a
 * camelCase answer's keys, not visited here), or the rewritten text is parsed after all.
 */
function parseScanned(text: string, scan: Scan): unknown {
  if (scan.quoted === 0) return JSON.parse(text);
  if (scan.plainAtRecordDepth && text.indexOf("\\") === -1) {
    const value: unknown = JSON.parse(text);
    if (quoteRecordNumbers(value) === scan.quoted) return value;
  }
  return JSON.parse(scan.text);
}

/** Turns the numbers under EXACT_KEYS in the maps at RECORD_DEPTH into their decimal text; returns how many. */
function quoteRecordNumbers(root: unknown): number {
  let count = 0;
  const visitRecord = (record: unknown) => {
    if (typeof record !== "object" || record === null || Array.isArray(record)) return;
    const o = record as Record<string, unknown>;
    // Each key by name (not a loop over EXACT_KEYS), so that each load stays monomorphic.
    if (typeof o.amount === "number") {
      o.amount = String(o.amount);
      count++;
    }
    if (typeof o.total_supply === "number") {
      o.total_supply = String(o.total_supply);
      count++;
    }
    if (typeof o.token_count === "number") {
      o.token_count = String(o.token_count);
      count++;
    }
    if (typeof o.burn_amount === "number") {
      o.burn_amount = String(o.burn_amount);
      count++;
    }
    if (typeof o.token_id === "number") {
      o.token_id = String(o.token_id);
      count++;
    }
  };
  const visitChildren = (value: unknown, visit: (child: unknown) => void) => {
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) visit(value[i]);
    else if (typeof value === "object" && value !== null) for (const key in value) visit((value as Record<string, unknown>)[key]);
  };
  visitChildren(root, (level2) => visitChildren(level2, visitRecord));
  return count;
}

interface Scan {
  /** The text with the exact numbers quoted (a rope: only flattened if parsed). */
  text: string;
  depth: number;
  longestString: number;
  /** Numbers quoted. */
  quoted: number;
  /** Every quoted number is a plain whole number of at most 15 digits in a map at RECORD_DEPTH. */
  plainAtRecordDepth: boolean;
}

/** A JSON number's text that is a whole number JSON.parse holds exactly and String() writes back the same: digits, no sign, no leading zero, at most 15. */
function isPlainSafeInteger(literal: string): boolean {
  const length = literal.length;
  if (length === 0 || length > 15 || (length > 1 && literal.charCodeAt(0) === 0x30)) return false;
  for (let i = 0; i < length; i++) {
    const c = literal.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * One pass over the text, before it is parsed: it bounds the depth, measures the strings and
 * quotes the exact numbers (what quoteExactNumbers does, without a second pass). A string is
 * skipped with indexOf (most of a page is strings: hashes, addresses), so the pass costs
 * little beside JSON.parse (bench/record-caps.bench.ts); brackets inside strings do not
 * count. A number is quoted only after a key of EXACT_KEYS outside any string and only when
 * it is a whole JSON number token: a string value and a number are interchangeable in
 * JSON's grammar, so the text stays exactly as valid or invalid as it was. The pass stops
 * where the outermost map or list closes. Text that is not valid JSON may be miscounted;
 * JSON.parse refuses it next anyway.
 */
function scanJson(text: string): Scan {
  let depth = 0;
  let deepest = 0;
  let longest = 0;
  let quoted = 0;
  let plainAtRecordDepth = true;
  let out = "";
  let copied = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) break;
      const size = end - i - 1;
      if (size > longest) longest = size;
      i = end;
      if (size >= 6 && size <= 12 && isExactKey(text, end - size, size)) {
        const number = numberAfterColon(text, end + 1);
        if (number !== undefined) {
          const literal = text.slice(number, (i = numberEnd(text, number)));
          const plain = toPlainDecimal(literal);
          if (plain === undefined) throw new ExactNumberError(`number out of range: ${literal.slice(0, 40)}`);
          quoted++;
          if (plainAtRecordDepth && (depth !== RECORD_DEPTH || !isPlainSafeInteger(literal))) plainAtRecordDepth = false;
          out += `${text.slice(copied, number)}"${plain}"`;
          copied = i;
          i -= 1;
        }
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > MAX_JSON_DEPTH) throw new JsonTooDeepError(`nested deeper than ${MAX_JSON_DEPTH} levels (at character ${i})`);
      if (depth > deepest) deepest = depth;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      // At depth 0 the answer's value has ended: what follows may only be whitespace, which
      // JSON.parse checks. A body of 256 KiB to 1 MiB comes padded with spaces (decodeBody,
      // src/http/request.ts), up to three quarters of its text, and reading them one by one
      // doubled this pass on such a page (bench/record-caps.bench.ts).
      if (--depth === 0) break;
    }
  }
  return { text: copied === 0 ? text : out + text.slice(copied), depth: deepest, longestString: longest, quoted, plainAtRecordDepth };
}

function isExactKey(text: string, at: number, size: number): boolean {
  switch (size) {
    case 6:
      return text.startsWith("amount", at);
    case 7:
      return text.startsWith("tokenId", at);
    case 8:
      return text.startsWith("token_id", at);
    case 10:
      return text.startsWith("tokenCount", at) || text.startsWith("burnAmount", at);
    case 11:
      return text.startsWith("token_count", at) || text.startsWith("burn_amount", at) || text.startsWith("totalSupply", at);
    case 12:
      return text.startsWith("total_supply", at);
    default:
      return false;
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const STRICT_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * Where the value after a key starts, when it is a whole JSON number token: a colon
 * (whitespace around it), the token, then whitespace, a comma or a closing bracket.
 */
function numberAfterColon(text: string, from: number): number | undefined {
  let i = from;
  while (isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x3a /* : */) return undefined;
  i++;
  while (isSpace(text.charCodeAt(i))) i++;
  const first = text.charCodeAt(i);
  if (first !== 0x2d /* - */ && !(first >= 0x30 && first <= 0x39)) return undefined;
  const end = numberEnd(text, i);
  const next = text.charCodeAt(end);
  if (!(isSpace(next) || next === 0x2c /* , */ || next === 0x7d /* } */ || next === 0x5d) /* ] */) return undefined;
  return STRICT_NUMBER.test(text.slice(i, end)) ? i : undefined;
}

/** The end of the run of number characters from `at`. */
function numberEnd(text: string, at: number): number {
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if ((c >= 0x30 && c <= 0x39) || c === 0x2e /* . */ || c === 0x65 /* e */ || c === 0x45 /* E */ || c === 0x2b /* + */ || c === 0x2d /* - */) i++;
    else return i;
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
