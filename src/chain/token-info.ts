import { KaiawatchError, isAbortError } from "../common/errors.js";
import { normalizeAddress } from "./address.js";
import { callContract } from "./chain-reads.js";
import { JsonRpcCallError, type JsonRpc } from "./json-rpc.js";
import { AbiDecodeError, decodeStringOrBytes32, decodeUint8, encodeDecimalsCall, encodeSymbolCall } from "./token-abi.js";

/** What a rule needs of a KIP-7 token to read and write its amounts. */
export interface TokenInfo {
  /** Lowercase. */
  address: string;
  /** 0..77: 10^77 is the largest power of ten a uint256 holds. */
  decimals: number;
  /**
   * On-chain text written by the token's deployer: data, never markup or a template, cut to
   * MAX_SYMBOL_CHARS. Undefined when symbol() is missing (it is optional in KIP-7).
   */
  symbol: string | undefined;
}

/** The largest number of decimals a token can use and still hold one whole unit in a uint256. */
export const MAX_TOKEN_DECIMALS = 77;
/** Symbols are short ("USDT", "Cake-LP"); spam tokens put sentences or URLs there. */
export const MAX_SYMBOL_CHARS = 64;

/** The address is not a KIP-7 token: decimals() reverts, returns nothing, or returns nonsense. */
export class NotATokenError extends KaiawatchError {
  override name = "NotATokenError";
  readonly address: string;
  constructor(address: string, why: string, options: { cause?: unknown } = {}) {
    super("KW_TOKEN_NOT_A_TOKEN", `${address} is not a KIP-7 token: ${why}`, options);
    this.address = address;
  }
}

/**
 * Reads decimals() and symbol() of a token at the head. Whether the address is a token is
 * decided by decimals(), which every token an amount can be written for must have; a missing
 * symbol() only means amounts are written in "tokens". Transport failures (KW_RPC) pass
 * through as they are: an unreachable node says nothing about the contract.
 */
export async function readTokenInfo(rpc: JsonRpc, address: string, signal?: AbortSignal): Promise<TokenInfo> {
  const token = normalizeAddress(address);
  const decimalsData = await notATokenOnRevert(token, "decimals()", () => callContract(rpc, { to: token, data: encodeDecimalsCall() }, "latest", signal));
  if (decimalsData === "0x") throw new NotATokenError(token, "decimals() returned no data (no contract at this address, or one without decimals())");
  let decimals: number;
  try {
    decimals = decodeUint8(decimalsData);
  } catch (error) {
    if (error instanceof AbiDecodeError) throw new NotATokenError(token, `decimals() returned ${error.message}`, { cause: error });
    throw error;
  }
  if (decimals > MAX_TOKEN_DECIMALS) throw new NotATokenError(token, `decimals() returned ${decimals}, more than ${MAX_TOKEN_DECIMALS}`);

  let symbol: string | undefined;
  try {
    const data = await callContract(rpc, { to: token, data: encodeSymbolCall() }, "latest", signal);
    symbol = data === "0x" ? undefined : capSymbol(decodeStringOrBytes32(data));
  } catch (error) {
    // A token without a readable symbol is still a token; amounts are then written in "tokens".
    if (!(error instanceof AbiDecodeError || (error instanceof JsonRpcCallError && error.isRevert))) throw error;
  }
  return { address: token, decimals, symbol: symbol === "" ? undefined : symbol };
}

async function notATokenOnRevert(token: string, what: string, call: () => Promise<string>): Promise<string> {
  try {
    return await call();
  } catch (error) {
    if (!isAbortError(error) && error instanceof JsonRpcCallError && error.isRevert) throw new NotATokenError(token, `${what} reverted (${JSON.stringify(error.rpcMessage)})`, { cause: error });
    throw error;
  }
}

/** Cut by code points, never inside a surrogate pair; an ellipsis shows the cut. */
function capSymbol(symbol: string): string {
  const chars = Array.from(symbol);
  return chars.length <= MAX_SYMBOL_CHARS ? symbol : `${chars.slice(0, MAX_SYMBOL_CHARS - 1).join("")}…`;
}

export interface TokenInfoCache {
  /** The token's info, read once per address; a failure is not kept, so the next call asks again. */
  get(address: string, signal?: AbortSignal): Promise<TokenInfo>;
}

/**
 * Decimals and symbol of a token do not change once deployed (the few upgradeable tokens
 * that could change them would break every wallet too), so they are read once per process.
 * Concurrent callers for the same token share one read.
 */
export function createTokenInfoCache(rpc: JsonRpc): TokenInfoCache {
  const known = new Map<string, Promise<TokenInfo>>();
  return {
    get(address, signal) {
      const token = normalizeAddress(address);
      let pending = known.get(token);
      if (pending === undefined) {
        pending = readTokenInfo(rpc, token, signal);
        known.set(token, pending);
        pending.catch(() => known.delete(token));
      }
      return pending;
    },
  };
}
