import { describe, expect, it } from "vitest";
import { formatTokenAmount, parseTokenAmount } from "../../src/chain/token-amounts.js";

const address = "0x00000000000000000000000000000000000000aa";
const usdt = { address, decimals: 6, symbol: "USDT" };
const wkaia = { address, decimals: 18, symbol: "WKAIA" };
const whole = { address, decimals: 0, symbol: "STK" };

describe("token amounts", () => {
  it("parses exactly to the last base unit with 6, 18 and 0 decimals", () => {
    expect(parseTokenAmount("50000 USDT", usdt)).toBe(50_000_000_000n);
    expect(parseTokenAmount("0.000001 USDT", usdt)).toBe(1n);
    expect(parseTokenAmount("49999.999999 tokens", usdt)).toBe(49_999_999_999n);
    expect(parseTokenAmount("1_000.5 USDT", usdt)).toBe(1_000_500_000n);
    expect(parseTokenAmount("0.000000000000000001 WKAIA", wkaia)).toBe(1n);
    expect(parseTokenAmount("123456789.123456789123456789 WKAIA", wkaia)).toBe(123456789123456789123456789n);
    expect(parseTokenAmount("5 * 10^18 tokens", wkaia)).toBe(5n * 10n ** 36n);
    expect(parseTokenAmount("1.5e3 Tokens", wkaia)).toBe(1500n * 10n ** 18n);
    expect(parseTokenAmount("7 STK", whole)).toBe(7n);
    expect(parseTokenAmount("1 token", whole)).toBe(1n);
    expect(parseTokenAmount("0 STK", whole)).toBe(0n);
  });

  it("takes base_units as the integer the contract stores, and says the three ways when the unit is missing", () => {
    expect(parseTokenAmount("50000 * 10^6 base_units", usdt)).toBe(50_000_000_000n);
    expect(parseTokenAmount("1 base_units", wkaia)).toBe(1n);
    expect(() => parseTokenAmount("0.5 base_units", usdt)).toThrow(/not a whole number/);
    expect(() => parseTokenAmount("50000", usdt)).toThrow('"50000" has no unit: write "50000 USDT" or "50000 tokens" (whole tokens), or "50000 base_units" (the integer the contract stores)');
  });

  it("refuses a fraction finer than the token's smallest unit, but not trailing zeros", () => {
    expect(() => parseTokenAmount("0.0000001 USDT", usdt)).toThrow(/6 decimals/);
    expect(() => parseTokenAmount("0.0000000000000000001 WKAIA", wkaia)).toThrow(/18 decimals/);
    expect(() => parseTokenAmount("1.5 STK", whole)).toThrow(/0 decimals/);
    expect(parseTokenAmount("1.50000000 USDT", usdt)).toBe(1_500_000n);
    expect(parseTokenAmount("2.0 STK", whole)).toBe(2n);
  });

  it("matches the symbol exactly, letter case included, and says which it is", () => {
    expect(() => parseTokenAmount("5 usdt", usdt)).toThrow(/"USDT", letter case included/);
    expect(() => parseTokenAmount("5 KAIA", usdt)).toThrow(/unknown unit "KAIA".*"tokens" or "USDT"/);
    expect(() => parseTokenAmount("5", usdt)).toThrow(/has no unit/);
    expect(() => parseTokenAmount("USDT", usdt)).toThrow();
    expect(() => parseTokenAmount("-5 USDT", usdt)).toThrow(/negative/);
    expect(() => parseTokenAmount("10^78 tokens", whole)).toThrow(/uint256/);
    expect(parseTokenAmount(`${(2n ** 256n - 1n).toString()} STK`, whole)).toBe(2n ** 256n - 1n);
  });

  it("takes a symbol with spaces or markup as a whole suffix, and 'tokens' when there is no symbol", () => {
    const odd = { address, decimals: 2, symbol: "<b>Visit x.io</b>" };
    expect(parseTokenAmount("3.25 <b>Visit x.io</b>", odd)).toBe(325n);
    const nameless = { address, decimals: 2, symbol: undefined };
    expect(parseTokenAmount("3.25 tokens", nameless)).toBe(325n);
    expect(() => parseTokenAmount("3.25 ABC", nameless)).toThrow(/write "tokens"/);
  });

  it("formats exactly, without trailing zeros, and round-trips", () => {
    expect(formatTokenAmount(50_000_000_000n, 6)).toBe("50000");
    expect(formatTokenAmount(1n, 6)).toBe("0.000001");
    expect(formatTokenAmount(1n, 18)).toBe("0.000000000000000001");
    expect(formatTokenAmount(7n, 0)).toBe("7");
    expect(formatTokenAmount(1_234_567_890_000n, 6, { group: true })).toBe("1,234,567.89");
    expect(formatTokenAmount(-1_500_000n, 6)).toBe("-1.5");
    for (const [units, token] of [[123456789123456789123456789n, wkaia], [49_999_999_999n, usdt], [98765n, whole]] as const) {
      expect(parseTokenAmount(`${formatTokenAmount(units, token.decimals)} tokens`, token)).toBe(units);
    }
  });
});
