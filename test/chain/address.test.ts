import { describe, expect, it } from "vitest";
import { AddressError, DEAD_ADDRESSES, ZERO_ADDRESS, addressToTopic, hasValidChecksum, isAddress, isBurnAddress, normalizeAddress, toChecksumAddress } from "../../src/chain/address.js";

// The EIP-55 specification's own examples.
const CHECKSUMMED = ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"];

describe("addresses", () => {
  it("recognises and lowercases addresses", () => {
    expect(isAddress(CHECKSUMMED[0])).toBe(true);
    expect(isAddress("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe")).toBe(false);
    expect(isAddress("5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")).toBe(false);
    expect(isAddress(42)).toBe(false);
    expect(normalizeAddress("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")).toBe("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed");
    expect(() => normalizeAddress("0xnope")).toThrow(AddressError);
  });

  it.each(CHECKSUMMED)("computes and checks the EIP-55 checksum of %s", (address) => {
    expect(toChecksumAddress(address.toLowerCase())).toBe(address);
    expect(hasValidChecksum(address)).toBe(true);
    expect(hasValidChecksum(address.toLowerCase())).toBe(true);
    expect(hasValidChecksum(`0x${address.slice(2).toUpperCase()}`)).toBe(true);
    // Flip the case of one letter: a typo the checksum exists to catch.
    const i = address.search(/[a-fA-F]/u);
    const c = address[i] as string;
    const typo = address.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + address.slice(i + 1);
    expect(hasValidChecksum(typo)).toBe(false);
  });

  it("knows the zero and burn addresses in any case", () => {
    expect(ZERO_ADDRESS).toBe(`0x${"0".repeat(40)}`);
    expect(isBurnAddress(ZERO_ADDRESS)).toBe(true);
    expect(isBurnAddress("0x000000000000000000000000000000000000dEaD")).toBe(true);
    expect(isBurnAddress("0xdEaD000000000000000042069420694206942069")).toBe(true);
    expect(isBurnAddress(CHECKSUMMED[0] as string)).toBe(false);
    expect(DEAD_ADDRESSES.every((a) => a === a.toLowerCase())).toBe(true);
  });

  it("encodes an address as an indexed-argument topic", () => {
    expect(addressToTopic("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")).toBe("0x0000000000000000000000005aaeb6053f3e94c9b9a09f33669435e7ef1beaed");
  });
});
