import fc from "fast-check";

/**
 * A small grammar of JavaScript patterns (literals, escapes, classes, `.`, anchors, groups,
 * alternation, `* + ? {m,n}` greedy and lazy) and texts over the characters where
 * JavaScript and RE2 could part: shared by the agreement property test and the regex benchmark.
 */

// Characters where JS and RE2 could part: \r and U+2028 (line ends for JS's `.`), U+00A0 and
// U+FEFF (JS's \s), é/É (case folding), "_" (\w), "-" and "." (syntax).
export const TEXT_CHARS = ["a", "b", "A", "B", "x", " ", "\n", "\r", "\t", "!", "é", "É", "0", "7", "_", "-", ".", "\u00a0", "\u2028", "\ufeff"];
export const text = fc.string({ unit: fc.constantFrom(...TEXT_CHARS), maxLength: 12 });

const LITERALS = ["a", "b", "A", "x", " ", "!", "é", "0", "_", "\\.", "\\-", "\\n", "\\r", "\\t", "\\u00e9", "\\x41", "\\/"];
const ESCAPE_CLASSES = ["\\d", "\\D", "\\w", "\\W", "\\s", "\\S"];
const CLASS_ITEMS = ["a", "b", "A", "é", " ", "_", "0", "a-b", "A-Z", "0-9", "\\d", "\\w", "\\s", "\\S", "\\n", "\\r", "\\u2028", ".", "!"];
const ANCHORS = ["^", "$", "\\b", "\\B"];

/** With u, JavaScript refuses identity escapes such as \- and \/ outside a class. */
const literal = (unicode: boolean) => fc.constantFrom(...LITERALS.filter((l) => !unicode || !["\\-", "\\/"].includes(l)));
const charClass = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.boolean(), fc.array(fc.constantFrom(...CLASS_ITEMS), { minLength: 1, maxLength: 4 }), fc.boolean()).map(([neg, items, dash]) => `[${neg ? "^" : ""}${items.join("")}${dash ? "-" : ""}]`) },
  { weight: 1, arbitrary: fc.constantFrom("[]", "[^]") },
);
const quantifier = fc.tuple(
  fc.oneof(fc.constantFrom("*", "+", "?"), fc.tuple(fc.nat(3), fc.option(fc.nat(3), { nil: undefined }), fc.boolean()).map(([m, extra, open]) => (open ? `{${m},}` : extra === undefined ? `{${m}}` : `{${m},${m + extra}}`))),
  fc.boolean(),
).map(([q, lazy]) => (lazy ? `${q}?` : q));

export function patternArbitrary(unicode: boolean, extra: fc.Arbitrary<string>[] = []): fc.Arbitrary<string> {
  const { alternation } = fc.letrec<{ alternation: string; sequence: string; term: string; atom: string }>((tie) => ({
    alternation: fc.array(tie("sequence"), { minLength: 1, maxLength: 3 }).map((alts) => alts.join("|")),
    sequence: fc.array(tie("term"), { minLength: 0, maxLength: 4 }).map((terms) => terms.join("")),
    term: fc.oneof(
      { weight: 5, arbitrary: tie("atom") },
      { weight: 3, arbitrary: fc.tuple(tie("atom"), quantifier).map(([a, q]) => a + q) },
      { weight: 1, arbitrary: fc.constantFrom(...ANCHORS) },
      ...extra.map((arbitrary) => ({ weight: 1, arbitrary })),
    ),
    atom: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 5, arbitrary: literal(unicode) },
      { weight: 2, arbitrary: fc.constantFrom(...ESCAPE_CLASSES) },
      { weight: 2, arbitrary: charClass },
      { weight: 2, arbitrary: fc.constant(".") },
      { weight: 2, arbitrary: fc.tuple(fc.constantFrom("(", "(?:"), tie("alternation")).map(([open, inner]) => `${open}${inner})`) },
    ),
  }));
  return alternation;
}

export const flags = fc.subarray(["i", "m", "s", "u"]).map((f) => f.join(""));
export const patternAndFlags = flags.chain((f) => fc.tuple(patternArbitrary(f.includes("u")), fc.constant(f)));
