import { KaiawatchError } from "../common/errors.js";
import { normalizeAddress } from "./address.js";

/**
 * The few KIP-7 (ERC-20) calls kaiawatch makes by eth_call, encoded and decoded by hand: three
 * selectors and three return shapes do not justify an ABI library. Return data comes from
 * whatever contract sits at the address, so every decoder checks lengths and offsets first.
 */
export const SELECTORS = Object.freeze({
  /** decimals() */
  decimals: "0x313ce567",
  /** symbol() */
  symbol: "0x95d89b41",
  /** balanceOf(address) */
  balanceOf: "0x70a08231",
});

/** Return data that does not have the shape the ABI says. */
export class AbiDecodeError extends KaiawatchError {
  override name = "AbiDecodeError";
  constructor(message: string) {
    super("KW_ABI_DECODE", message);
  }
}

export function encodeDecimalsCall(): string {
  return SELECTORS.decimals;
}

export function encodeSymbolCall(): string {
  return SELECTORS.symbol;
}

export function encodeBalanceOfCall(owner: string): string {
  return `${SELECTORS.balanceOf}${"0".repeat(24)}${normalizeAddress(owner).slice(2)}`;
}

/** The bytes of 0x-prefixed hex return data. */
function bytesOf(hex: string): Uint8Array {
  if (typeof hex !== "string" || !/^0x(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new AbiDecodeError(`return data ${JSON.stringify(String(hex).slice(0, 40))} is not 0x-prefixed hex bytes`);
  return Uint8Array.from(Buffer.from(hex.slice(2), "hex"));
}

function word(bytes: Uint8Array, index: number): bigint {
  const start = index * 32;
  if (bytes.length < start + 32) throw new AbiDecodeError(`return data of ${bytes.length} bytes has no word ${index}`);
  return BigInt(`0x${Buffer.from(bytes.subarray(start, start + 32)).toString("hex")}`);
}

/** A uint256 return value. Empty data (an account without code, a fallback that returns nothing) is an error. */
export function decodeUint256(hex: string): bigint {
  const bytes = bytesOf(hex);
  if (bytes.length === 0) throw new AbiDecodeError("empty return data where a uint256 was expected");
  return word(bytes, 0);
}

/** A uint8 return value (decimals()): a word whose value fits in 8 bits, as the ABI pads it. */
export function decodeUint8(hex: string): number {
  const value = decodeUint256(hex);
  if (value > 255n) throw new AbiDecodeError(`${value > 10n ** 30n ? "a huge number" : value.toString()} is not a uint8`);
  return Number(value);
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** A `string` return value: offset, length, bytes. Invalid UTF-8 becomes U+FFFD (it is shown, never interpreted). */
export function decodeString(hex: string): string {
  const bytes = bytesOf(hex);
  const offset = word(bytes, 0);
  if (offset % 32n !== 0n || offset + 32n > BigInt(bytes.length)) throw new AbiDecodeError(`string offset ${offset > 2n ** 32n ? "(huge)" : offset.toString()} is outside the ${bytes.length} bytes of return data`);
  const at = Number(offset);
  const length = word(bytes, at / 32);
  if (length > BigInt(bytes.length - at - 32)) throw new AbiDecodeError(`string length ${length > 2n ** 32n ? "(huge)" : length.toString()} runs past the ${bytes.length} bytes of return data`);
  return utf8.decode(bytes.subarray(at + 32, at + 32 + Number(length)));
}

/**
 * A symbol() or name() return value: a `string`, or a `bytes32` padded with zero bytes, as
 * some early tokens (MKR-style) declared it. Exactly 32 bytes of data can only be a bytes32:
 * an ABI string takes at least 64.
 */
export function decodeStringOrBytes32(hex: string): string {
  const bytes = bytesOf(hex);
  if (bytes.length === 32) {
    let end = 32;
    while (end > 0 && bytes[end - 1] === 0) end--;
    return utf8.decode(bytes.subarray(0, end));
  }
  return decodeString(hex);
}
