import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

/** 0x-prefixed lowercase keccak-256 of a text: topic0 of an event, or (first 4 bytes) a method id. */
export function keccakHex(text: string): string {
  return `0x${bytesToHex(keccak_256(utf8ToBytes(text)))}`;
}

type AbiType = "address" | "uint256" | "bytes" | "address[]";

export interface EventSpec {
  /** The decoded name served as `type`. */
  name: string;
  signature: string;
  topic0: string;
  params: readonly { name: string; type: "address" | "uint256"; indexed: boolean }[];
  /** The name came from a signature database, not a verified ABI (`estimated_event_log`). */
  estimated: boolean;
}

function event(signature: string, names: string[], indexed: boolean[], estimated = false): EventSpec {
  const types = signature.slice(signature.indexOf("(") + 1, -1).split(",") as ("address" | "uint256")[];
  return {
    name: signature.slice(0, signature.indexOf("(")),
    signature,
    topic0: keccakHex(signature),
    params: types.map((type, i) => ({ name: names[i] ?? `arg${i}`, type, indexed: indexed[i] ?? false })),
    estimated,
  };
}

export const EVENTS = {
  transfer20: event("Transfer(address,address,uint256)", ["from", "to", "value"], [true, true, false]),
  approval: event("Approval(address,address,uint256)", ["owner", "spender", "value"], [true, true, false]),
  transfer721: event("Transfer(address,address,uint256)", ["from", "to", "tokenId"], [true, true, true]),
  transferSingle: event("TransferSingle(address,address,address,uint256,uint256)", ["operator", "from", "to", "tokenId", "value"], [true, true, true, false, false]),
  deposit: event("Deposit(address,uint256)", ["dst", "wad"], [true, false], true),
} as const;

export interface FunctionSpec {
  signature: string;
  methodId: string;
  params: readonly { type: AbiType; name: string }[];
}

function fn(signature: string, names: string[]): FunctionSpec {
  const inner = signature.slice(signature.indexOf("(") + 1, -1);
  const types = (inner ? inner.split(",") : []) as AbiType[];
  return { signature, methodId: keccakHex(signature).slice(0, 10), params: types.map((type, i) => ({ type, name: names[i] ?? "" })) };
}

export const FUNCTIONS = {
  transfer: fn("transfer(address,uint256)", ["to", "amount"]),
  balanceOf: fn("balanceOf(address)", ["account"]),
  deposit: fn("deposit()", []),
  withdraw: fn("withdraw(uint256)", ["wad"]),
  execute: fn("execute(address,uint256,bytes)", ["target", "value", "data"]),
  swap: fn("swapExactKAIAForTokens(uint256,address[],address,uint256)", ["amountOutMin", "path", "to", "deadline"]),
  claim: fn("claim(address,uint256)", ["account", "amount"]),
} as const;

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

export function padAddress(address: string): string {
  return `0x${"0".repeat(24)}${address.slice(2).toLowerCase()}`;
}

export function uint256Hex(value: string | bigint): string {
  return BigInt(value).toString(16).padStart(64, "0");
}

/** ABI-encode simple static arguments (addresses and uints), as calldata after the method id. */
export function encodeArgs(types: readonly AbiType[], values: readonly string[]): string {
  return types
    .map((type, i) => {
      const v = values[i] ?? "0";
      if (type === "address") return padAddress(v).slice(2);
      if (type === "uint256") return uint256Hex(v);
      // Dynamic types are not decoded by anyone here; an offset-shaped word keeps lengths right.
      return uint256Hex(BigInt(32 * types.length));
    })
    .join("");
}
