import { describe, expect, it } from "vitest";
import { classicMatchers } from "../../src/notify/matcher-classic-parser.js";
import { utf8Matchers } from "../../src/notify/matcher-utf8-parser.js";
import { parseMatcher, parseMatchers, type Matcher } from "../../src/notify/matchers.js";

/** [name, operator, value] of each matcher, the shape upstream's expectations are written in. */
type Expected = readonly (readonly [string, string, string])[];

const shape = (found: readonly Matcher[]): Expected => found.map((m) => [m.name, m.type, m.value] as const);

// Cases of prometheus/alertmanager pkg/labels/parse_test.go (TestMatchers), as data: the input,
// then the matchers it reads as or the error message it is refused with.
const CLASSIC: readonly (readonly [string, Expected | string])[] = [
  ["{}", []],
  [",", "bad matcher format: "],
  ["{,}", "bad matcher format: "],
  ["{foo='}", [["foo", "=", "'"]]],
  ["{foo=`}", [["foo", "=", "`"]]],
  ['{foo=\\"}', [["foo", "=", '"']]],
  ["{foo=bar}", [["foo", "=", "bar"]]],
  ['{foo="bar"}', [["foo", "=", "bar"]]],
  ["{foo=~bar.*}", [["foo", "=~", "bar.*"]]],
  ['{foo=~"bar.*"}', [["foo", "=~", "bar.*"]]],
  ["{foo!=bar}", [["foo", "!=", "bar"]]],
  ['{foo!="bar"}', [["foo", "!=", "bar"]]],
  ["{foo!~bar.*}", [["foo", "!~", "bar.*"]]],
  ['{foo!~"bar.*"}', [["foo", "!~", "bar.*"]]],
  ['{foo="bar", baz!="quux"}', [["foo", "=", "bar"], ["baz", "!=", "quux"]]],
  ['{foo="bar", baz!~"quux.*"}', [["foo", "=", "bar"], ["baz", "!~", "quux.*"]]],
  ['{foo="bar",baz!~".*quux", derp="wat"}', [["foo", "=", "bar"], ["baz", "!~", ".*quux"], ["derp", "=", "wat"]]],
  ['{foo="bar", baz!="quux", derp="wat"}', [["foo", "=", "bar"], ["baz", "!=", "quux"], ["derp", "=", "wat"]]],
  ['{foo="bar", baz!~".*quux.*", derp="wat"}', [["foo", "=", "bar"], ["baz", "!~", ".*quux.*"], ["derp", "=", "wat"]]],
  ['{foo="bar", instance=~"some-api.*"}', [["foo", "=", "bar"], ["instance", "=~", "some-api.*"]]],
  ['{foo=""}', [["foo", "=", ""]]],
  ['{foo="bar,quux", job="job1"}', [["foo", "=", "bar,quux"], ["job", "=", "job1"]]],
  ['{foo = "bar", dings != "bums", }', [["foo", "=", "bar"], ["dings", "!=", "bums"]]],
  ["foo=bar,dings!=bums", [["foo", "=", "bar"], ["dings", "!=", "bums"]]],
  ['{quote="She said: \\"Hi, ladies! That\'s gender-neutral…\\""}', [["quote", "=", 'She said: "Hi, ladies! That\'s gender-neutral…"']]],
  ['statuscode=~"5.."', [["statuscode", "=~", "5.."]]],
  ["tricky=~~~", [["tricky", "=~", "~~"]]],
  ['trickier==\\\\=\\=\\"', [["trickier", "=", '=\\=\\="']]],
  ['contains_quote != "\\"" , contains_comma !~ "foo,bar" , ', [["contains_quote", "!=", '"'], ["contains_comma", "!~", "foo,bar"]]],
  ["{foo=bar}}", [["foo", "=", "bar}"]]],
  ["{foo=bar}},}", [["foo", "=", "bar}}"]]],
  ["{foo=,bar=}}", [["foo", "=", ""], ["bar", "=", "}"]]],
  ["{foo=bar\\t}", [["foo", "=", "bar\\t"]]],
  ["{foo=bar\\n}", [["foo", "=", "bar\n"]]],
  ["{foo=bar\\}", [["foo", "=", "bar\\"]]],
  ["{foo=bar\\\\}", [["foo", "=", "bar\\"]]],
  ['{foo=bar\\"}', [["foo", "=", 'bar"']]],
  ["job=", [["job", "=", ""]]],
  ['job="value', 'matcher value contains unescaped double quote: "value'],
  ['job=value"', 'matcher value contains unescaped double quote: value"'],
  ['trickier==\\\\=\\=\\""', 'matcher value contains unescaped double quote: =\\\\=\\=\\""'],
  ['contains_unescaped_quote = foo"bar', 'matcher value contains unescaped double quote: foo"bar'],
  ['{invalid-name = "valid label"}', 'bad matcher format: invalid-name = "valid label"'],
  ['{foo=~"invalid[regexp"}', "error parsing regexp: missing closing ]: `[regexp)$`"],
  // Double escaped strings.
  ['"{foo=\\"bar"}', 'bad matcher format: "{foo=\\"bar"'],
  ['"foo=\\"bar"', 'bad matcher format: "foo=\\"bar"'],
  ['"foo=\\"bar\\""', 'bad matcher format: "foo=\\"bar\\""'],
  ['"foo=\\"bar\\"', 'bad matcher format: "foo=\\"bar\\"'],
  ['"{foo=\\"bar\\"}"', 'bad matcher format: "{foo=\\"bar\\"}"'],
  ['"foo="bar""', 'bad matcher format: "foo="bar""'],
  ["{{foo=", "bad matcher format: {foo="],
  ["{foo=", [["foo", "=", ""]]],
  ["{foo=}b", [["foo", "=", "}b"]]],
];

// Cases of prometheus/alertmanager matcher/parse/parse_test.go (TestMatchers), as data. Only
// acceptance is compared for refusals: Alertmanager never reports this parser's messages.
const UTF8: readonly (readonly [string, Expected | "refused"])[] = [
  ["", []],
  ["{}", []],
  ["{foo=bar}", [["foo", "=", "bar"]]],
  ["{foo=bar,}", [["foo", "=", "bar"]]],
  ["{foo!=bar}", [["foo", "!=", "bar"]]],
  ["{foo=~[a-z]+}", [["foo", "=~", "[a-z]+"]]],
  ["{foo!~[a-z]+}", [["foo", "!~", "[a-z]+"]]],
  ["{foo=🙂}", [["foo", "=", "🙂"]]],
  ["{foo=🙂bar}", [["foo", "=", "🙂bar"]]],
  ["foo=bar", [["foo", "=", "bar"]]],
  ["foo=bar,", [["foo", "=", "bar"]]],
  ["foo!=bar", [["foo", "!=", "bar"]]],
  ["foo=~[a-z]+", [["foo", "=~", "[a-z]+"]]],
  ["foo!~[a-z]+", [["foo", "!~", "[a-z]+"]]],
  ['{"foo"="bar"}', [["foo", "=", "bar"]]],
  ['{"foo"="bar",}', [["foo", "=", "bar"]]],
  ['{"foo"!="bar"}', [["foo", "!=", "bar"]]],
  ['{"foo"=~"[a-z]+"}', [["foo", "=~", "[a-z]+"]]],
  ['{"foo"=~"\\\\d+"}', [["foo", "=~", "\\d+"]]],
  ['{"foo"!~"[a-z]+"}', [["foo", "!~", "[a-z]+"]]],
  ['{"foo"="🙂"}', [["foo", "=", "🙂"]]],
  ['{"foo"="\\xf0\\x9f\\x99\\x82"}', [["foo", "=", "🙂"]]],
  ['{"foo"="\\U0001f642"}', [["foo", "=", "🙂"]]],
  ['{"foo"="🙂bar"}', [["foo", "=", "🙂bar"]]],
  ['{"foo"="bar\\n"}', [["foo", "=", "bar\n"]]],
  ['{"foo"="bar\\t"}', [["foo", "=", "bar\t"]]],
  ['{"foo"="\\"bar\\""}', [["foo", "=", '"bar"']]],
  ['{"foo"="bar\\\\"}', [["foo", "=", "bar\\"]]],
  ['"foo"="bar"', [["foo", "=", "bar"]]],
  ['"foo"="bar",', [["foo", "=", "bar"]]],
  ["{foo=bar,bar!=baz}", [["foo", "=", "bar"], ["bar", "!=", "baz"]]],
  ['{foo="bar",bar!="baz"}', [["foo", "=", "bar"], ["bar", "!=", "baz"]]],
  ["foo=bar,bar!=baz", [["foo", "=", "bar"], ["bar", "!=", "baz"]]],
  ['foo="bar",bar!="baz"', [["foo", "=", "bar"], ["bar", "!=", "baz"]]],
  [",", "refused"],
  ["{,}", "refused"],
  ["{", "refused"],
  ["}", "refused"],
  ["foo=bar}", "refused"],
  ["{foo=bar", "refused"],
  ['{foo=:"bar"}', "refused"],
  ['{foo="bar\\w"}', "refused"],
  ['{"foo"=~"\\d+"}', "refused"],
  ["{foo=bar\\n}", "refused"],
  ['{"foo"="\\xf0\\x9f"}', "refused"],
];

// Cases of prometheus/alertmanager matcher/compat/parse_test.go (TestFallbackMatchersParser and
// TestFallbackMatcherParser): what Alertmanager's default mode makes of a line, and of one matcher.
const FALLBACK_LINES: readonly (readonly [string, Expected | string])[] = [
  ["{foo=bar,bar=baz}", [["foo", "=", "bar"], ["bar", "=", "baz"]]],
  ["{foo!bar}", "bad matcher format: foo!bar"],
  ["{foo🙂=bar,bar=baz🙂}", [["foo🙂", "=", "bar"], ["bar", "=", "baz🙂"]]],
  ["{foo=!bar,bar=$baz\\n}", [["foo", "=", "!bar"], ["bar", "=", "$baz\n"]]],
  ['{foo="\\xf0\\x9f\\x99\\x82"}', [["foo", "=", "\\xf0\\x9f\\x99\\x82"]]],
];
const FALLBACK_ONE: readonly (readonly [string, Expected | string])[] = [
  ["foo=bar", [["foo", "=", "bar"]]],
  ["foo!bar", "bad matcher format: foo!bar"],
  ["foo🙂=bar", [["foo🙂", "=", "bar"]]],
  ["foo=!bar\\n", [["foo", "=", "!bar\n"]]],
  ['foo="\\xf0\\x9f\\x99\\x82"', [["foo", "=", "\\xf0\\x9f\\x99\\x82"]]],
  ["{foo=bar}", "unexpected open or close brace: {foo=bar}"],
];

function outcome(parse: () => readonly Matcher[]): Expected | string {
  try {
    return shape(parse());
  } catch (error) {
    return (error as Error).message;
  }
}

describe("Alertmanager's matcher parser cases", () => {
  it.each(CLASSIC)("classic parser: %s", (input, expected) => {
    expect(outcome(() => classicMatchers(input))).toEqual(expected);
  });

  it.each(UTF8)("UTF-8 parser: %s", (input, expected) => {
    const found = outcome(() => utf8Matchers(input));
    if (expected === "refused") expect(typeof found, JSON.stringify(found)).toBe("string");
    else expect(found).toEqual(expected);
  });

  it.each(FALLBACK_LINES)("a config line (fallback mode): %s", (input, expected) => {
    expect(outcome(() => parseMatchers(input))).toEqual(expected);
  });

  it.each(FALLBACK_ONE)("one matcher (fallback mode): %s", (input, expected) => {
    expect(outcome(() => [parseMatcher(input)])).toEqual(expected);
  });

  it("a line upstream's classic parser accepts reads as that parser reads it, whatever the UTF-8 one says", () => {
    for (const [input, expected] of CLASSIC) if (typeof expected !== "string") expect(outcome(() => parseMatchers(input)), input).toEqual(expected);
  });

  it("a line both refuse is refused with the classic message", () => {
    for (const [input, expected] of CLASSIC) {
      if (typeof expected === "string" && typeof outcome(() => utf8Matchers(input)) === "string") expect(outcome(() => parseMatchers(input)), input).toBe(expected);
    }
  });

  it("prints each matcher so that it reads back the same", () => {
    for (const text of ['{quote="She said: \\"Hi\\"\\n"}', '{"service.name"=~"api|web"}', "{foo🙂=bar}", 'a="back\\\\slash"']) {
      const first = parseMatchers(text);
      expect(shape(parseMatchers(`{${first.map(String).join(", ")}}`)), text).toEqual(shape(first));
    }
    expect(String(parseMatchers('"service.name"=api')[0])).toBe('service.name="api"');
    expect(String(parseMatchers('"service name"=api')[0])).toBe('"service name"="api"');
  });
});
