import { RE2JS } from "re2js";
import { MAX_RECORD_TEXT } from "../model/record-limits.js";

/** Longest pattern a rule may use: a rule is read by people, and long patterns are hard to review. */
export const MAX_PATTERN_LENGTH = 256;

/**
 * Largest compiled pattern (RE2 program instructions) a rule may use. Matching is linear in
 * the text but also in the size of the program when RE2 cannot keep a DFA (patterns such as
 * `[ab]*a[ab]{250}c`, whose DFA would need 2^250 states, build a state per character or run
 * the NFA), so the worst cost of one match is about program size × text length. 300 leaves
 * room for a 256-character alternation of revert reasons (about 220) and for `{64}` hex
 * patterns (about 70), while `x{500}` and nested counts are refused.
 */
export const MAX_PROGRAM_SIZE = 300;

/**
 * How much of a text a pattern reads: the first MAX_RECORD_TEXT characters (UTF-16 code
 * units; a surrogate pair is never cut), which is all of any text field of a record, since
 * a record's texts are cut to that length when it enters (src/families/cap-record.ts). Reading
 * less let text placed after filler evade a rule ("x" × 9,000 then "drain" passed
 * `/drain/` when patterns read 8,192). With MAX_PROGRAM_SIZE this bounds one match to well
 * under a second even for the worst pattern a rule may write (bench/regex.bench.ts, "the
 * text a rule reads": its worst is what one match of one record can cost). A pattern
 * anchored with `$` sees the end of this prefix as the end of the text.
 */
export const MAX_MATCHED_TEXT = MAX_RECORD_TEXT;

/** Flags a rule may use. `g` and `y` are refused: they make RegExp.test stateful. */
const ALLOWED_FLAGS = /^[imsu]*$/;

/** A compiled `matches` pattern: linear-time in the text, whatever the pattern. */
export interface SafePattern {
  /** The pattern as the rule wrote it, without slashes and flags. */
  readonly source: string;
  readonly flags: string;
  /** Whether the pattern matches somewhere in the first MAX_MATCHED_TEXT characters of the text. */
  test(text: string): boolean;
  /** The same over the whole text, past MAX_MATCHED_TEXT: for the benchmark's engine figures; rules use test. */
  testUncapped(text: string): boolean;
  /** `/source/flags`, as explain prints it. */
  toString(): string;
}

export type PatternResult = { ok: true; pattern: SafePattern } | { ok: false; message: string };

/** The text a pattern reads: its first MAX_MATCHED_TEXT characters, never half a surrogate pair. */
export function matchedText(text: string): string {
  if (text.length <= MAX_MATCHED_TEXT) return text;
  const end = isHighSurrogate(text.charCodeAt(MAX_MATCHED_TEXT - 1)) ? MAX_MATCHED_TEXT - 1 : MAX_MATCHED_TEXT;
  return text.slice(0, end);
}

/**
 * Compiles a `matches` pattern from a rule into RE2 (the re2js port), whose matching time is
 * linear in the text whatever the pattern: a revert message is written by whoever deployed the
 * contract, and a backtracking engine (JS RegExp) takes exponential time on `(a|aa)+$` and many
 * other innocent-looking patterns. Written as `pattern` or `/pattern/flags` (flags from i, m, s,
 * u) in JavaScript syntax, which is checked first with the JavaScript parser (compiling a
 * RegExp does not run it), then translated to RE2 syntax so that the same pattern means the
 * same thing (`.`, `\s`, `[]`, `[^]` and escapes as in JavaScript). Refused: what RE2 cannot
 * match in linear time (backreferences, lookahead, lookbehind), patterns over
 * MAX_PATTERN_LENGTH characters or MAX_PROGRAM_SIZE instructions.
 *
 * Differences left, on texts rules rarely meet: characters are Unicode code points (as with the
 * u flag; without it JavaScript sees an emoji as two), case folding is Unicode's (the Kelvin
 * sign matches k under i), and with m only \n ends a line for ^ and $ (JavaScript also counts
 * \r, U+2028 and U+2029).
 */
export function compileSafePattern(text: string): PatternResult {
  if (text.length > MAX_PATTERN_LENGTH) {
    return { ok: false, message: `the pattern is ${text.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed` };
  }
  let source = text;
  let flags = "";
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(text);
  if (literal) {
    source = literal[1] as string;
    flags = literal[2] as string;
    if (!ALLOWED_FLAGS.test(flags)) return { ok: false, message: `flags "${flags}": only i, m, s and u are allowed` };
  }
  try {
    new RegExp(source, flags);
  } catch (error) {
    return { ok: false, message: `not a valid regular expression: ${(error as Error).message}` };
  }
  const translated = translate(source, flags);
  if ("unsupported" in translated) {
    const what = translated.unsupported;
    return /backreference|lookahead|lookbehind/.test(what)
      ? { ok: false, message: `${what}, which cannot be matched in linear time; rewrite the pattern without it` }
      : { ok: false, message: `${what} is not supported; write the character as \\xHH or \\uHHHH` };
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(translated.re2, (flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0) | (flags.includes("m") ? RE2JS.MULTILINE : 0) | (flags.includes("s") ? RE2JS.DOTALL : 0));
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
    if (/\\[pP]\{/.test(reason)) return { ok: false, message: `RE2 does not know the Unicode property in ${reason.replace(/^.*: /, "")}; use the short names, e.g. \\p{L}, \\p{Lu}, \\p{Greek}` };
    return { ok: false, message: `the linear-time pattern engine (RE2) refuses it: ${reason}` };
  }
  const size = re.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    return { ok: false, message: `the pattern compiles to ${size} instructions; at most ${MAX_PROGRAM_SIZE} are allowed (large counted repetitions such as {500} cost the most)` };
  }
  const shown = `/${source}/${flags}`;
  return {
    ok: true,
    pattern: { source, flags, test: (subject: string) => re.test(matchedText(subject)), testUncapped: (subject: string) => re.test(subject), toString: () => shown },
  };
}

type Translation = { re2: string } | { unsupported: string };

/** JavaScript's \s: what RE2's \s (ASCII only) lacks. As code point ranges. */
const JS_SPACE: [number, number][] = [
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029],
  [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
];
const JS_LINE_END: [number, number][] = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];
const MAX_CODE_POINT = 0x10ffff;

function complement(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const hex = (cp: number) => `\\x{${cp.toString(16)}}`;
const rangesText = (ranges: [number, number][]) => ranges.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join("");
const SPACE_ITEMS = rangesText(JS_SPACE);
const NON_SPACE_ITEMS = rangesText(complement(JS_SPACE));
const ANY_CHAR = `[${hex(0)}-${hex(MAX_CODE_POINT)}]`;
const NO_CHAR = `[^${hex(0)}-${hex(MAX_CODE_POINT)}]`;
const DOT_NO_NEWLINE = `[${rangesText(complement(JS_LINE_END))}]`;

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** One escape (the text after a backslash), read in JavaScript's sense. */
type Escape =
  | { kind: "char"; cp: number; length: number }
  /** A class of characters: `items` fits inside [...]. */
  | { kind: "class"; items: string; length: number }
  | { kind: "assertion"; re2: string; length: number }
  | { kind: "unsupported"; what: string };

/**
 * Translates a pattern the JavaScript parser accepted into RE2 syntax with the same meaning.
 * Every literal character becomes `\x{…}`, so that RE2's own escapes and class syntax
 * (`\z`, `\Q`, `\pN`, `[[:alpha:]]`) never reinterpret what JavaScript read as a literal.
 */
function translate(p: string, flags: string): Translation {
  const unicode = flags.includes("u");
  const dotAll = flags.includes("s");
  let out = "";
  let i = 0;
  while (i < p.length) {
    const c = p[i] as string;
    if (c === "\\") {
      const e = readEscape(p, i + 1, unicode, false);
      if (e.kind === "unsupported") return { unsupported: e.what };
      out += e.kind === "char" ? hex(e.cp) : e.kind === "class" ? `[${e.items}]` : e.re2;
      i += 1 + e.length;
      continue;
    }
    if (c === "[") {
      const cls = readClass(p, i + 1, unicode);
      if ("unsupported" in cls) return cls;
      out += cls.re2;
      i = cls.end;
      continue;
    }
    if (c === "(") {
      if (p.startsWith("(?=", i) || p.startsWith("(?!", i)) return { unsupported: "lookahead ((?= or (?!)" };
      if (p.startsWith("(?<=", i) || p.startsWith("(?<!", i)) return { unsupported: "lookbehind ((?<= or (?<!)" };
      // Captures mean nothing to a yes/no test; names would only meet RE2's stricter name rules.
      if (p.startsWith("(?<", i)) {
        out += "(?:";
        i = p.indexOf(">", i) + 1;
      } else if (p.startsWith("(?:", i)) {
        out += "(?:";
        i += 3;
      } else {
        out += "(?:";
        i += 1;
      }
      continue;
    }
    if (c === ".") {
      out += dotAll ? "." : DOT_NO_NEWLINE;
      i++;
      continue;
    }
    if (c === "{") {
      const q = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
      if (q) {
        out += q[0];
        i += q[0].length;
      } else {
        out += hex(0x7b); // JavaScript without u reads a "{" that starts no count as a literal
        i++;
      }
      continue;
    }
    if ("^$|)*+?".includes(c)) {
      out += c;
      i++;
      continue;
    }
    const cp = p.codePointAt(i) as number;
    out += hex(cp);
    i += cp > 0xffff ? 2 : 1;
  }
  return { re2: out };
}

/** A class body from `start` (just after "["): its RE2 form and the index after its "]". */
function readClass(p: string, start: number, unicode: boolean): { re2: string; end: number } | { unsupported: string } {
  let i = start;
  let negated = false;
  if (p[i] === "^") {
    negated = true;
    i++;
  }
  // JavaScript: "[]" matches nothing, "[^]" any character (RE2 would read "]" as a literal).
  if (p[i] === "]") return { re2: negated ? ANY_CHAR : NO_CHAR, end: i + 1 };
  let items = "";
  type Atom = { cp: number } | { items: string };
  const readAtom = (): Atom | { unsupported: string } => {
    if (p[i] === "\\") {
      const e = readEscape(p, i + 1, unicode, true);
      if (e.kind === "unsupported") return { unsupported: e.what };
      i += 1 + e.length;
      if (e.kind === "char") return { cp: e.cp };
      if (e.kind === "class") return { items: e.items };
      return { unsupported: "an assertion inside a class" }; // not reachable: \b is a backspace here
    }
    const cp = p.codePointAt(i) as number;
    i += cp > 0xffff ? 2 : 1;
    return { cp };
  };
  while (i < p.length && p[i] !== "]") {
    const a = readAtom();
    if ("unsupported" in a) return a;
    if (p[i] === "-" && p[i + 1] !== "]" && i + 1 < p.length) {
      const save = i;
      i++;
      const b = readAtom();
      if ("unsupported" in b) return b;
      if ("cp" in a && "cp" in b) {
        items += `${hex(a.cp)}-${hex(b.cp)}`;
        continue;
      }
      // JavaScript without u: a class escape at either end makes "-" a literal, e.g. [\d-z].
      items += "cp" in a ? hex(a.cp) : a.items;
      items += hex(0x2d);
      i = save + 1;
      continue;
    }
    items += "cp" in a ? hex(a.cp) : a.items;
  }
  return { re2: `[${negated ? "^" : ""}${items}]`, end: i + 1 };
}

/** The escape whose text starts at `i` (just after the backslash), in JavaScript's sense. */
function readEscape(p: string, i: number, unicode: boolean, inClass: boolean): Escape {
  const c = p[i] as string;
  const char = (cp: number, length: number): Escape => ({ kind: "char", cp, length });
  switch (c) {
    case "d": case "D": case "w": case "W":
      return { kind: "class", items: `\\${c}`, length: 1 };
    case "s":
      return { kind: "class", items: SPACE_ITEMS, length: 1 };
    case "S":
      return { kind: "class", items: NON_SPACE_ITEMS, length: 1 };
    case "b":
      return inClass ? char(0x08, 1) : { kind: "assertion", re2: "\\b", length: 1 };
    case "B":
      return inClass ? char(0x42, 1) : { kind: "assertion", re2: "\\B", length: 1 };
    case "t": return char(0x09, 1);
    case "n": return char(0x0a, 1);
    case "v": return char(0x0b, 1);
    case "f": return char(0x0c, 1);
    case "r": return char(0x0d, 1);
    case "0":
      if (/[0-9]/.test(p[i + 1] ?? "")) return { kind: "unsupported", what: "an octal escape (\\0 followed by a digit)" };
      return char(0, 1);
    case "k":
      if (p[i + 1] === "<") return { kind: "unsupported", what: "a backreference (\\k<name>)" };
      return char(0x6b, 1);
    case "c": {
      const letter = p[i + 1] ?? "";
      if (/[A-Za-z]/.test(letter)) return char(letter.charCodeAt(0) % 32, 2);
      return { kind: "unsupported", what: "a \\c escape without a letter" };
    }
    case "x": {
      const m = /^[0-9a-fA-F]{2}/.exec(p.slice(i + 1));
      return m ? char(parseInt(m[0], 16), 3) : char(0x78, 1);
    }
    case "u": {
      const braced = unicode ? /^\{([0-9a-fA-F]+)\}/.exec(p.slice(i + 1)) : null;
      if (braced) return char(parseInt(braced[1] as string, 16), 2 + (braced[0].length));
      const m = /^[0-9a-fA-F]{4}/.exec(p.slice(i + 1));
      if (!m) return char(0x75, 1);
      const unit = parseInt(m[0], 16);
      if (isHighSurrogate(unit)) {
        const low = /^\\u([0-9a-fA-F]{4})/.exec(p.slice(i + 5));
        const lowUnit = low ? parseInt(low[1] as string, 16) : 0;
        if (low && isLowSurrogate(lowUnit)) return char(0x10000 + ((unit - 0xd800) << 10) + (lowUnit - 0xdc00), 11);
      }
      if (isHighSurrogate(unit) || isLowSurrogate(unit)) return { kind: "unsupported", what: "a lone surrogate (\\u" + m[0] + ")" };
      return char(unit, 5);
    }
    case "p": case "P": {
      if (!unicode) return char(c.charCodeAt(0), 1); // without u, JavaScript reads \p as "p"
      const m = /^\{(?:(?:General_Category|gc|Script|sc)=)?([A-Za-z_]+)\}/.exec(p.slice(i + 1));
      if (!m) return { kind: "unsupported", what: `a Unicode property escape RE2 does not know (${p.slice(i - 1, p.indexOf("}", i) + 1)})` };
      return { kind: "class", items: `\\${c}{${m[1]}}`, length: 1 + m[0].length };
    }
    default: {
      if (/[1-9]/.test(c)) return { kind: "unsupported", what: inClass ? "an octal escape" : "a backreference (\\1 to \\9)" };
      // An identity escape (\. \/ \\ and, without u, \a \e \q…): the character itself.
      const cp = p.codePointAt(i) as number;
      return char(cp, cp > 0xffff ? 2 : 1);
    }
  }
}
