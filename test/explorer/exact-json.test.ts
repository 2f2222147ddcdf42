import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseExactJson, quoteExactNumbers, readExactJson, toPlainDecimal, EXACT_KEYS, JsonTooDeepError, MAX_JSON_DEPTH } from "../../src/explorer/exact-json.js";

/** The exact value of a plain decimal string, as a scaled bigint pair, for comparisons. */
function scaled(text: string, scale: number): bigint {
  const negative = text.startsWith("-");
  const [whole = "0", fraction = ""] = text.replace(/^-/, "").split(".");
  const value = BigInt(whole + fraction.padEnd(scale, "0").slice(0, scale));
  return negative ? -value : value;
}

describe("toPlainDecimal", () => {
  it("returns plain decimals unchanged", () => {
    for (const text of ["0", "1", "1.5", "123456789012345678901.123456789012345678", "-3.25", "0.000000000000000001"]) expect(toPlainDecimal(text)).toBe(text);
  });

  it("writes exponent notation out exactly", () => {
    expect(toPlainDecimal("1e21")).toBe("1000000000000000000000");
    expect(toPlainDecimal("1E+21")).toBe("1000000000000000000000");
    expect(toPlainDecimal("1.5e-3")).toBe("0.0015");
    expect(toPlainDecimal("-2.50e1")).toBe("-25");
    expect(toPlainDecimal("1e-18")).toBe("0.000000000000000001");
    expect(toPlainDecimal("123.456e2")).toBe("12345.6");
    expect(toPlainDecimal("0e10")).toBe("0");
    expect(toPlainDecimal("-0.0e3")).toBe("0");
  });

  it("refuses what is not a number, and absurd exponents", () => {
    for (const text of ["", "abc", "1.", ".5", "0x10", "1e", "1e99999", "NaN", "Infinity", " 1"]) expect(toPlainDecimal(text)).toBeUndefined();
  });

  it("is exact for any mantissa and exponent (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.integer({ min: -60, max: 60 }), (mantissa, exponent) => {
        const plain = toPlainDecimal(`${mantissa}e${exponent}`);
        expect(plain).toMatch(/^-?\d+(\.\d+)?$/);
        // mantissa * 10^exponent, compared at a scale of 10^60.
        const expected = exponent >= 0 ? mantissa * 10n ** BigInt(exponent + 60) : mantissa * 10n ** BigInt(60 + exponent);
        expect(scaled(plain!, 60)).toBe(expected);
      }),
    );
  });
});

describe("parseExactJson", () => {
  it("keeps amounts beyond 2^53 and with 18 decimals exact", () => {
    const text = '{"amount": 123456789012345678901.123456789012345678, "total_supply":9007199254740993,"token_count" : 1e21,"burn_amount":0.000000000000000001,"token_id":115792089237316195423570985008687907853269984665640564039457584007913129639935}';
    expect(parseExactJson(text)).toEqual({
      amount: "123456789012345678901.123456789012345678",
      total_supply: "9007199254740993",
      token_count: "1000000000000000000000",
      burn_amount: "0.000000000000000001",
      token_id: "115792089237316195423570985008687907853269984665640564039457584007913129639935",
    });
  });

  it("leaves other keys' numbers and string amounts alone", () => {
    expect(parseExactJson('{"block_id":12,"amount":"1.5","nested":{"amount":2}}')).toEqual({ block_id: 12, amount: "1.5", nested: { amount: "2" } });
    expect(parseExactJson('[{"amount":1},{"amount":-2.5}]')).toEqual([{ amount: "1" }, { amount: "-2.5" }]);
  });

  it("does not touch an `\"amount\": 1` written inside a string value", () => {
    const hostile = { name: 'evil", "amount": 1, "x": "', note: 'a \\"amount\\": 2 b', ['weird"amount']: 3, amount: "7" };
    const text = JSON.stringify(hostile);
    expect(quoteExactNumbers(text)).toBe(text);
    expect(parseExactJson(text)).toEqual(hostile);
  });

  it("never changes what JSON.parse reads for strings holding key-like text (property)", () => {
    const keyish = fc.constantFrom('"amount": 1', '"token_id":2', ',"amount":3', '{"total_supply": 4}', "\\", '"', ",", "{", " ", "amount", ":5");
    const text = fc.array(fc.oneof(keyish, fc.string({ maxLength: 4 })), { maxLength: 8 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(fc.dictionary(text, text, { maxKeys: 4 }), (object) => {
        const json = JSON.stringify({ data: object, list: Object.values(object) });
        expect(parseExactJson(json)).toEqual(JSON.parse(json));
      }),
    );
  });

  it("quotes exactly what the pattern of quoteExactNumbers quotes, in one pass with the depth check (property)", () => {
    const space = fc.constantFrom("", " ", "\n", "\t ");
    const key = fc.oneof(fc.constantFrom(...EXACT_KEYS), fc.constantFrom("block_id", "amounts", "x", "token_ids"));
    const number = fc.oneof(
      fc.integer().map(String),
      fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
      fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: -30, max: 30 })).map(([a, b, e]) => `${a}.${b}e${e}`),
    );
    const value = fc.oneof(number, number.map((n) => JSON.stringify(n)), fc.constant('"a\\"b"'), fc.constant("null"));
    const member = fc.tuple(space, key, space, space, value, space).map(([a, k, b, c, v, d]) => `${a}"${k}"${b}:${c}${v}${d}`);
    const object = fc.array(member, { maxLength: 5 }).map((members) => `{${members.join(",")}}`);
    fc.assert(
      fc.property(fc.array(object, { maxLength: 4 }), (objects) => {
        const text = `{"results":[${objects.join(",")}],"n":1}`;
        expect(parseExactJson(text)).toEqual(JSON.parse(quoteExactNumbers(text)));
      }),
    );
  });

  it("gives what parsing the rewritten text gives when the records' numbers are turned into text after parsing (property)", () => {
    // Plain whole numbers in records' maps take the path that parses the text as it came;
    // repeated keys, escaped key names, other depths and other numbers must not change the value.
    const key = fc.oneof(fc.constantFrom(...EXACT_KEYS), fc.constantFrom("block_id", "token\\u005fcount", "amoun\\u0074", "x"));
    const number = fc.oneof(fc.nat({ max: 1000 }).map(String), fc.constantFrom("0", "999999999999999", "1000000000000000", "9007199254740993", "-1", "-0", "1e3", "2.5"));
    const value = fc.oneof(number, number.map((n) => JSON.stringify(n)), fc.constant('{"amount":7}'), fc.constant("[1]"), fc.constant("null"));
    const member = fc.tuple(key, value).map(([k, v]) => `"${k}":${v}`);
    const object = fc.array(member, { maxLength: 5 }).map((members) => `{${members.join(",")}}`);
    const list = fc.array(object, { maxLength: 4 }).map((objects) => `[${objects.join(",")}]`);
    fc.assert(
      fc.property(list, fc.option(object), fc.option(list), (results, paging, deeper) => {
        const text = `{"results":${results}${paging === null ? "" : `,"paging":${paging}`}${deeper === null ? "" : `,"property":{"nested":${deeper}}`}}`;
        expect(readExactJson(text).value).toEqual(JSON.parse(quoteExactNumbers(text)));
      }),
      { numRuns: 300 },
    );
    // The cases the property is after, each once.
    for (const text of ['{"results":[{"token_count":1,"token_count":2}]}', '{"results":[{"token_count":1},{"token\\u005fcount":2}]}', '{"results":[{"token_count":1,"token_count":"x"}]}', '{"results":[{"token_count":"x","token_count":1}]}', '{"p":{"token_count":5},"results":[{"token_count":1}]}', '{"results":[{"token_count":-0}]}', '[[{"amount":12}]]']) {
      expect(readExactJson(text).value, text).toEqual(JSON.parse(quoteExactNumbers(text)));
    }
  });

  it("says how deep the answer nests and how long its longest string is as written", () => {
    // "a\"bcdefgh": 10 characters as written, 9 read.
    expect(readExactJson('{"results":[{"a":"xyz","nested":{"k":[1]}}],"note":"a\\"bcdefgh"}')).toMatchObject({ depth: 5, longestString: 10 });
    expect(readExactJson("[]")).toMatchObject({ value: [], depth: 1, longestString: 0 });
  });

  it("stops where the outermost value closes: padding after it is read by JSON.parse alone, anything else is still refused", () => {
    const page = '{"results":[{"amount":12,"note":"[[["}],"n":1}';
    expect(readExactJson(`${page}${" ".repeat(4096)}`)).toEqual(readExactJson(page));
    expect(readExactJson(`${page}\n\t `).value).toEqual({ results: [{ amount: "12", note: "[[[" }], n: 1 });
    for (const junk of [`${page}{"amount":1}`, `${page}]`, `[]${"[".repeat(100)}`, `${page}"`]) expect(() => parseExactJson(junk), junk).toThrow(SyntaxError);
  });

  it("leaves invalid JSON invalid", () => {
    expect(() => parseExactJson('{"results":[{"amount": 1')).toThrow(SyntaxError);
    expect(() => parseExactJson('{"a":"x,"amount": 1}')).toThrow(SyntaxError);
    // Not JSON numbers: never quoted into valid strings.
    for (const bad of ['{"amount": 01}', '{"amount": 1.}', '{"amount": +1}', '{"amount": 1 2}', '{"amount": 1-2}', '["amount": 1]']) expect(() => parseExactJson(bad)).toThrow(SyntaxError);
  });
});

describe("the depth bound (issue 29, item 8)", () => {
  const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

  it("reads 64 levels and refuses 65 with JsonTooDeepError, before parsing", () => {
    expect(parseExactJson(nested(MAX_JSON_DEPTH))).toBeInstanceOf(Array);
    expect(() => parseExactJson(nested(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeepError);
    expect(() => parseExactJson(nested(100_000))).toThrow(/nested deeper than 64 levels/);
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    const text = JSON.stringify({ a: `${"[".repeat(200)}\\"${"{".repeat(200)}"`, b: ["\\", "]]]"] });
    expect(parseExactJson(text)).toEqual(JSON.parse(text));
  });
});
