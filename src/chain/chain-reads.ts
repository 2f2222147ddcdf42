import { KaiawatchError } from "../common/errors.js";
import { normalizeAddress } from "./address.js";
import type { JsonRpc } from "./json-rpc.js";
import { AbiDecodeError, decodeUint256, encodeBalanceOfCall } from "./token-abi.js";

/** A block number, or the head as the node sees it. */
export type BlockTag = number | "latest";

/** A node answered a read with a result of the wrong shape. */
export class ChainReadError extends KaiawatchError {
  override name = "ChainReadError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("KW_CHAIN_READ", message, options);
  }
}

function blockParam(block: BlockTag): string {
  if (block === "latest") return block;
  if (!Number.isSafeInteger(block) || block < 0) throw new ChainReadError(`block ${String(block)} is not a block number`);
  return `0x${block.toString(16)}`;
}

function quantity(method: string, host: string, result: unknown): bigint {
  // A QUANTITY: 0x, hex digits, no leading zeros by the spec; tolerated, since some nodes pad.
  if (typeof result !== "string" || !/^0x[0-9a-fA-F]{1,64}$/.test(result)) {
    throw new ChainReadError(`${method} at ${host} returned ${JSON.stringify(result)?.slice(0, 80) ?? "no result"}, not a hex quantity`);
  }
  return BigInt(result);
}

/** The KAIA balance of an address in kei (eth_getBalance) at a block. */
export async function readBalance(rpc: JsonRpc, address: string, block: BlockTag, signal?: AbortSignal): Promise<bigint> {
  const result = await rpc.call("eth_getBalance", [normalizeAddress(address), blockParam(block)], signal);
  return quantity("eth_getBalance", rpc.host, result);
}

/**
 * The return data of a read-only call (eth_call) at a block, 0x-prefixed hex; "0x" when the
 * address has no code. A revert is a JsonRpcCallError whose `isRevert` is true.
 */
export async function callContract(rpc: JsonRpc, call: { to: string; data: string }, block: BlockTag, signal?: AbortSignal): Promise<string> {
  const result = await rpc.call("eth_call", [{ to: normalizeAddress(call.to), data: call.data }, blockParam(block)], signal);
  if (typeof result !== "string" || !/^0x(?:[0-9a-fA-F]{2})*$/.test(result)) {
    throw new ChainReadError(`eth_call at ${rpc.host} returned ${JSON.stringify(result)?.slice(0, 80) ?? "no result"}, not hex bytes`);
  }
  return result.toLowerCase();
}

/** A KIP-7 balance in the token's base units (balanceOf by eth_call) at a block. */
export async function readTokenBalance(rpc: JsonRpc, token: string, owner: string, block: BlockTag, signal?: AbortSignal): Promise<bigint> {
  const data = await callContract(rpc, { to: token, data: encodeBalanceOfCall(owner) }, block, signal);
  try {
    return decodeUint256(data);
  } catch (error) {
    if (error instanceof AbiDecodeError) throw new ChainReadError(`balanceOf(${normalizeAddress(owner)}) of ${normalizeAddress(token)}: ${error.message}`, { cause: error });
    throw error;
  }
}
