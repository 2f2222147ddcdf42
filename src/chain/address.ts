import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { KaiawatchError } from "../common/errors.js";

/** The zero address: NFT transfers from it are mints, to it are burns. */
export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/**
 * Conventional burn addresses besides the zero address, lowercase: `0x…dEaD` and the
 * `0xdEaD…42069` address many token contracts send burnt tokens to.
 */
export const DEAD_ADDRESSES: readonly string[] = Object.freeze([
  "0x000000000000000000000000000000000000dead",
  "0xdead000000000000000042069420694206942069",
]);

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export class AddressError extends KaiawatchError {
  override name = "AddressError";
  constructor(message: string) {
    super("KW_CHAIN_ADDRESS", message);
  }
}

/** A 0x-prefixed 20-byte hex address, in any letter case (the checksum is not checked here). */
export function isAddress(text: unknown): text is string {
  return typeof text === "string" && ADDRESS.test(text);
}

/** The lowercase form used in identity keys and comparisons; throws on a non-address. */
export function normalizeAddress(text: string): string {
  if (!isAddress(text)) throw new AddressError(`${JSON.stringify(text)} is not an address (0x and 40 hex digits)`);
  return text.toLowerCase();
}

/** True for the zero address and the conventional dead addresses, in any letter case. */
export function isBurnAddress(address: string): boolean {
  const lower = address.toLowerCase();
  return lower === ZERO_ADDRESS || DEAD_ADDRESSES.includes(lower);
}

/** The EIP-55 mixed-case form of an address. */
export function toChecksumAddress(address: string): string {
  const lower = normalizeAddress(address).slice(2);
  const hash = bytesToHex(keccak_256(utf8ToBytes(lower)));
  let out = "0x";
  for (let i = 0; i < lower.length; i++) {
    const c = lower[i] as string;
    out += parseInt(hash[i] as string, 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

/**
 * False only for a mixed-case address whose case does not match its EIP-55 checksum:
 * that is almost always a typo in a config, worth refusing before it silently never matches.
 * All-lowercase and all-uppercase addresses carry no checksum and pass.
 */
export function hasValidChecksum(address: string): boolean {
  if (!isAddress(address)) return false;
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  return toChecksumAddress(address) === address;
}

/** The 32-byte topic encoding of an address (left-padded with zeros), lowercase, as indexed event arguments carry it. */
export function addressToTopic(address: string): string {
  return `0x${"0".repeat(24)}${normalizeAddress(address).slice(2)}`;
}
