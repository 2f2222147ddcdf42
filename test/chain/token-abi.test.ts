import { describe, expect, it } from "vitest";
import { functionSelector } from "../../src/chain/signatures.js";
import { SELECTORS, decodeString, decodeStringOrBytes32, decodeUint256, decodeUint8, encodeBalanceOfCall } from "../../src/chain/token-abi.js";

const word = (n: bigint | number) => BigInt(n).toString(16).padStart(64, "0");
const abiString = (text: string) => {
  const hex = Buffer.from(text, "utf8").toString("hex");
  return `0x${word(32)}${word(hex.length / 2)}${hex.padEnd(Math.ceil(hex.length / 64) * 64, "0")}`;
};

describe("token ABI helpers", () => {
  it("selectors are keccak-256 of the signatures", () => {
    expect(SELECTORS.decimals).toBe(functionSelector("decimals()"));
    expect(SELECTORS.symbol).toBe(functionSelector("symbol()"));
    expect(SELECTORS.balanceOf).toBe(functionSelector("balanceOf(address)"));
  });

  it("encodes balanceOf with the address padded to a word", () => {
    expect(encodeBalanceOfCall("0x00000000000000000000000000000000000000AB")).toBe(`0x70a08231${"0".repeat(62)}ab`);
  });

  it("decodes uint256 and uint8, refusing empty data and values beyond 8 bits", () => {
    expect(decodeUint256(`0x${word(2n ** 256n - 1n)}`)).toBe(2n ** 256n - 1n);
    expect(decodeUint8(`0x${word(6)}`)).toBe(6);
    expect(() => decodeUint256("0x")).toThrow(/empty/);
    expect(() => decodeUint256("0x1234")).toThrow(/no word 0/);
    expect(() => decodeUint256("0xzz")).toThrow(/not 0x-prefixed hex/);
    expect(() => decodeUint8(`0x${word(256)}`)).toThrow(/not a uint8/);
  });

  it("decodes strings, bytes32 symbols and refuses offsets and lengths outside the data", () => {
    expect(decodeString(abiString("USDT"))).toBe("USDT");
    expect(decodeStringOrBytes32(abiString("Tether USD with a name longer than thirty-two bytes"))).toBe("Tether USD with a name longer than thirty-two bytes");
    expect(decodeStringOrBytes32(`0x${Buffer.from("MKR").toString("hex").padEnd(64, "0")}`)).toBe("MKR");
    expect(decodeStringOrBytes32(abiString("<@U1> \u202Eevil"))).toBe("<@U1> \u202Eevil");
    expect(() => decodeString(`0x${word(2n ** 255n)}${word(4)}`)).toThrow(/offset/);
    expect(() => decodeString(`0x${word(32)}${word(1000)}${word(0)}`)).toThrow(/length/);
    expect(() => decodeString(`0x${word(32)}`)).toThrow();
    // Invalid UTF-8 is shown as U+FFFD, not refused.
    expect(decodeString(`0x${word(32)}${word(1)}ff${"0".repeat(62)}`)).toBe("\uFFFD");
  });
});
