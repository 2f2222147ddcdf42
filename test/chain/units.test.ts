import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AmountError, KEI_PER_KAIA, decimalTextOfNumber, formatKei, kaiaToKei, parseAmount, parseInteger } from "../../src/chain/units.js";

/** kei written in a unit with `decimals`, built digit by digit (independently of formatKei). */
function inUnit(kei: bigint, decimals: number): string {
  if (decimals === 0) return kei.toString();
  const digits = kei.toString().padStart(decimals + 1, "0");
  return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

const UNITS = [
  { name: "KAIA", decimals: 18 },
  { name: "kaia", decimals: 18 },
  { name: "gkei", decimals: 9 },
  { name: "Gkei", decimals: 9 },
  { name: "kei", decimals: 0 },
] as const;

const kei = fc.bigInt({ min: 0n, max: 10n ** 30n });

describe("parseAmount", () => {
  it("reads the amounts a rule writes", () => {
    expect(parseAmount("1000 KAIA")).toBe(1000n * KEI_PER_KAIA);
    expect(parseAmount("0.5 KAIA")).toBe(KEI_PER_KAIA / 2n);
    expect(parseAmount("10^18 kei")).toBe(KEI_PER_KAIA);
    expect(parseAmount("5 * 10^18 kei")).toBe(5n * KEI_PER_KAIA);
    expect(parseAmount("2.5 × 10^3 KAIA")).toBe(2500n * KEI_PER_KAIA);
    expect(parseAmount("1000000 kei")).toBe(1_000_000n);
    expect(parseAmount("1.5 gkei")).toBe(1_500_000_000n);
    expect(parseAmount("1.5e3 KAIA")).toBe(1500n * KEI_PER_KAIA);
    expect(parseAmount("2e-6 KAIA")).toBe(2_000_000_000_000n);
    expect(parseAmount("1_000_000 KAIA")).toBe(1_000_000n * KEI_PER_KAIA);
    expect(parseAmount("  7kaia ")).toBe(7n * KEI_PER_KAIA);
    expect(parseAmount("0.000000000000000001 KAIA")).toBe(1n);
    expect(parseAmount("0.1000000000000000000 KAIA")).toBe(KEI_PER_KAIA / 10n); // trailing zeros are still exact
  });

  it("refuses a number without a unit, saying how to write it (it meant KAIA until issue 41)", () => {
    expect(() => parseAmount("1.5")).toThrow('1.5 has no unit: write "1.5 KAIA" (what a number without a unit meant until now), "1.5 gkei", or "1.5 kei"');
    expect(() => parseAmount("1000")).toThrow(/"1000 KAIA"/);
    expect(parseAmount("1000 base_units")).toBe(1000n);
  });

  it("is exact where floats are not", () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(parseAmount("0.1 KAIA") + parseAmount("0.2 KAIA")).toBe(parseAmount("0.3 KAIA"));
    expect(parseAmount("1000000000.000000000000000001 KAIA")).toBe(10n ** 27n + 1n);
  });

  it.each([
    ["0.0000000000000000001 KAIA", /finer than 1 kei/],
    ["0.5 kei", /kei is the smallest unit/],
    ["0.0000000001 gkei", /finer than 1 kei/],
    ["1000 KLAY", /unknown unit "KLAY"/],
    ["-1 KAIA", /cannot be negative/],
    ["abc", /not an amount/],
    ["", /not an amount/],
    ["1,000 KAIA", /not a number/],
    ["1.2.3 KAIA", /not a number/],
    ["10^9999 kei", /larger than any amount/],
    ["10^78 KAIA", /larger than any amount/],
    ["2 * 2^256 kei", /larger than any amount/],
  ])("refuses %j", (text, message) => {
    expect(() => parseAmount(text)).toThrow(AmountError);
    expect(() => parseAmount(text)).toThrow(message);
  });

  it("property: a kei amount written in any unit parses back to the same kei", () => {
    fc.assert(
      fc.property(kei, fc.constantFrom(...UNITS), (k, unit) => {
        expect(parseAmount(`${inUnit(k, unit.decimals)} ${unit.name}`)).toBe(k);
        expect(parseAmount(`${k} kei`)).toBe(k);
        expect(parseAmount(`${k} * 10^0 kei`)).toBe(k);
      }),
    );
  });

  it("property: comparing parsed amounts agrees with bigint arithmetic, whatever the units", () => {
    fc.assert(
      fc.property(kei, kei, fc.constantFrom(...UNITS), fc.constantFrom(...UNITS), (a, b, ua, ub) => {
        const pa = parseAmount(`${inUnit(a, ua.decimals)} ${ua.name}`);
        const pb = parseAmount(`${inUnit(b, ub.decimals)} ${ub.name}`);
        expect(pa < pb).toBe(a < b);
        expect(pa === pb).toBe(a === b);
        expect(pa > pb).toBe(a > b);
      }),
    );
  });

  it("property: amounts finer than the unit are refused, never rounded", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 1, max: 9 }), (whole, extra) => {
        const text = `${inUnit(whole, 18)}${extra} KAIA`; // a 19th decimal that is not zero
        expect(() => parseAmount(text)).toThrow(/finer than 1 kei/);
      }),
    );
  });
});

describe("kaiaToKei and formatKei", () => {
  it("convert the explorer's decimal KAIA text", () => {
    expect(kaiaToKei("1.5")).toBe(1_500_000_000_000_000_000n);
    expect(kaiaToKei("0")).toBe(0n);
    expect(kaiaToKei("0.000000000000000001")).toBe(1n);
    expect(formatKei(1_500_000_000_000_000_000n)).toBe("1.5");
    expect(formatKei(1500n * KEI_PER_KAIA)).toBe("1500");
    expect(formatKei(1n)).toBe("0.000000000000000001");
    expect(formatKei(0n)).toBe("0");
    expect(formatKei(-1n)).toBe("-0.000000000000000001");
    expect(formatKei(1_234_567n * KEI_PER_KAIA + 5n * 10n ** 17n, { group: true })).toBe("1,234,567.5");
  });

  it.each(["1.0000000000000000001", "1e5", "-1", " 1", "1.", ".5", "1,5", "abc"])("kaiaToKei refuses %j", (text) => {
    expect(() => kaiaToKei(text)).toThrow(AmountError);
  });

  it("property: format then parse round-trips, and format is trimmed", () => {
    fc.assert(
      fc.property(kei, (k) => {
        const text = formatKei(k);
        expect(kaiaToKei(text)).toBe(k);
        expect(parseAmount(`${text} KAIA`)).toBe(k);
        expect(text).not.toMatch(/\.\d*0$|\.$/);
        expect(parseAmount(`${formatKei(k, { group: true }).replaceAll(",", "_")} KAIA`)).toBe(k);
      }),
    );
  });

  it("property: parse then format gives the canonical text", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.stringMatching(/^\d{0,18}$/), (whole, fraction) => {
        const text = fraction ? `${whole}.${fraction}` : `${whole}`;
        const canonical = text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
        expect(formatKei(kaiaToKei(text))).toBe(canonical);
      }),
    );
  });
});

describe("parseInteger and decimalTextOfNumber", () => {
  it("reads integers in base units", () => {
    expect(parseInteger("1000")).toBe(1000n);
    expect(parseInteger("-5")).toBe(-5n);
    expect(parseInteger("10^18")).toBe(10n ** 18n);
    expect(parseInteger("1000 * 10^18")).toBe(10n ** 21n);
    expect(parseInteger("1.5 * 10^6")).toBe(1_500_000n);
    expect(parseInteger("1e6")).toBe(1_000_000n);
    expect(() => parseInteger("1.5")).toThrow(/not a whole number/);
    expect(() => parseInteger("2^300")).toThrow(/2\^256/);
    expect(parseInteger("2^256")).toBe(2n ** 256n);
    expect(() => parseInteger("0x10")).toThrow(AmountError);
  });

  it("accepts only numbers whose decimal text is beyond doubt", () => {
    expect(decimalTextOfNumber(1500)).toBe("1500");
    expect(decimalTextOfNumber(0.5)).toBe("0.5");
    expect(decimalTextOfNumber(0.000001)).toBe("0.000001");
    expect(decimalTextOfNumber(2 ** 53)).toBeUndefined();
    expect(decimalTextOfNumber(1e-7)).toBeUndefined();
    expect(decimalTextOfNumber(0.12345678901234568)).toBeUndefined();
    expect(decimalTextOfNumber(Number.NaN)).toBeUndefined();
  });
});
