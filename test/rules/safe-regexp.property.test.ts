import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileSafePattern, MAX_MATCHED_TEXT, MAX_PATTERN_LENGTH } from "../../src/rules/safe-regexp.js";
import { flags, patternAndFlags, patternArbitrary, text } from "./pattern-arbitraries.js";

/**
 * The linear-time engine (RE2 through re2js, behind a JS-to-RE2 translation) against
 * JavaScript's own RegExp as the oracle, over patterns from a small grammar
 * (pattern-arbitraries.ts) and short texts. The texts are at most 12 characters so that the
 * backtracking oracle stays fast even on the patterns that freeze it on long texts.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

describe("matches patterns: the linear-time engine agrees with JavaScript", () => {
  it("accepts every generated pattern and answers as RegExp does on short texts", () => {
    fc.assert(
      fc.property(patternAndFlags, fc.array(text, { minLength: 1, maxLength: 8 }), ([source, f], texts) => {
        fc.pre(source.length <= MAX_PATTERN_LENGTH - 6); // the length bound is tested on its own
        const oracle = new RegExp(source, f); // the grammar only writes valid JavaScript
        const compiled = compileSafePattern(`/${source}/${f}`);
        if (!compiled.ok) {
          // The one bound a supported pattern may meet: its compiled size (a rare deep nesting
          // of counted groups). Any other refusal is a translation bug.
          expect(compiled.message, `/${source}/${f}`).toMatch(/compiles to \d+ instructions; at most 300/);
          return;
        }
        for (const t of texts) {
          // Documented difference: with m, RE2's ^ and $ see only \n as a line end.
          if (f.includes("m") && /[\r\u2028]/.test(t)) continue;
          expect(compiled.pattern.test(t), `/${source}/${f} on ${JSON.stringify(t)}`).toBe(oracle.test(t));
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("refuses a pattern only for syntax RE2 cannot match in linear time, saying so", () => {
    const unsupported = fc.constantFrom("(?=a)", "(?!b)", "(?<=a)", "(?<!b)", "(a)(?:\\1)", "(?<n>a)\\k<n>");
    fc.assert(
      fc.property(
        flags.chain((f) => fc.tuple(patternArbitrary(f.includes("u"), [unsupported]), fc.constant(f))),
        ([source, f]) => {
          fc.pre(source.length <= MAX_PATTERN_LENGTH - 6);
          // Only a repeated group name (two (?<n>a)) makes the grammar write invalid JavaScript.
          let valid = true;
          try {
            new RegExp(source, f);
          } catch {
            valid = false;
          }
          fc.pre(valid || !source.includes("(?<n>"));
          if (!valid) throw new Error(`the grammar wrote invalid JavaScript: /${source}/${f}`);
          const compiled = compileSafePattern(`/${source}/${f}`);
          const hasUnsupported = /\(\?[=!]|\(\?<[=!]|\\1|\\k</.test(source);
          if (!compiled.ok && /instructions; at most/.test(compiled.message)) return; // the size bound, as above
          if (hasUnsupported) {
            expect(compiled.ok).toBe(false);
            if (!compiled.ok) expect(compiled.message).toMatch(/(lookahead|lookbehind|backreference).*cannot be matched in linear time/);
          } else {
            expect(compiled.ok ? "" : compiled.message).toBe("");
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("keeps JavaScript's meaning where RE2 syntax differs", () => {
    const cases: [string, string, boolean][] = [
      ["[]a", "a", false], // JS: an empty class, matching nothing
      ["[^]", "\n", true], // JS: any character
      ["[[:alpha:]]", "a", false], // JS: a class of "[:alph" then "]"; not a POSIX class
      ["[[:alpha:]]", ":]", true],
      ["^.$", "\r", false], // JS's . stops at \r and U+2028 as well as \n
      ["^.$", "\u2028", false],
      ["/^.$/s", "\r", true],
      ["\\s", "\u00a0", true], // JS's \s is Unicode's
      ["\\s", "\ufeff", true],
      ["\\a\\z", "az", true], // identity escapes in JS, assertions or errors in RE2
      ["\\Qa", "Qa", true],
      ["\\p{L}", "p{L}", true], // without u, \p is a "p"
      ["/\\p{L}/u", "é", true],
      ["/\\p{Script=Greek}/u", "λ", true],
      ["[\\b]", "\b", true], // a backspace inside a class
      ["[\\d-z]", "-", true], // "-" beside a class escape is a literal
      ["a{", "a{", true],
      ["x{,2}", "x{,2}", true],
      ["\\uD83D\\uDE00", "😀", true],
      ["/\\u{1F600}/u", "😀", true],
      ["(?<word>ab)+", "abab", true],
      ["/OWNABLE/i", "Ownable: caller is not the owner", true],
    ];
    for (const [pattern, subject, expected] of cases) {
      const compiled = compileSafePattern(pattern);
      if (!compiled.ok) throw new Error(`${pattern} refused: ${compiled.message}`);
      expect(compiled.pattern.test(subject), `${pattern} on ${JSON.stringify(subject)}`).toBe(expected);
    }
  });

  it("reads only the first MAX_MATCHED_TEXT characters, never cutting a surrogate pair", () => {
    const tail = compileSafePattern("tail$");
    const end = compileSafePattern("/^a*$/");
    const emoji = compileSafePattern("/😀$/u");
    if (!tail.ok || !end.ok || !emoji.ok) throw new Error("refused");
    const long = `${"a".repeat(MAX_MATCHED_TEXT)}tail`;
    expect(tail.pattern.test(long)).toBe(false);
    expect(tail.pattern.test(long.slice(4))).toBe(true);
    expect(end.pattern.test(long)).toBe(true); // the end of what is read is the end of the text
    expect(emoji.pattern.test(`${"a".repeat(MAX_MATCHED_TEXT - 1)}😀`)).toBe(false);
    expect(emoji.pattern.test(`${"a".repeat(MAX_MATCHED_TEXT - 2)}😀`)).toBe(true);
  });

  it("shows the pattern as the rule wrote it", () => {
    const r = compileSafePattern("/(a|aa)+$/i");
    expect(r.ok && String(r.pattern)).toBe("/(a|aa)+$/i");
    const plain = compileSafePattern("^Tr.*r$");
    expect(plain.ok && String(plain.pattern)).toBe("/^Tr.*r$/");
  });
});
