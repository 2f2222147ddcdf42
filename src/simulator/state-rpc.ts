import { uint256Hex } from "./abi.js";
import type { Balances } from "./balances.js";
import type { Chain } from "./chain.js";
import type { World } from "./world.js";

/** A JSON-RPC answer's body without jsonrpc and id. */
export type RpcAnswer = { result: unknown } | { error: { code: number; message: string; data?: string } };

// Written out here rather than imported from src/chain: the simulator is the reference the client is tested against.
const SELECTORS = { decimals: "0x313ce567", symbol: "0x95d89b41", name: "0x06fdde03", balanceOf: "0x70a08231" };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const invalid = (message: string): RpcAnswer => ({ error: { code: -32602, message } });
// What a Kaia node answers when a call reverts without a reason.
const REVERTED: RpcAnswer = { error: { code: -32000, message: "evm: execution reverted", data: "0x" } };

/** A `string` as a contract returns it: offset, length, bytes padded to a word. */
function abiString(text: string): string {
  const hex = Buffer.from(text, "utf8").toString("hex");
  return `0x${uint256Hex(32n)}${uint256Hex(BigInt(hex.length / 2))}${hex.padEnd(Math.ceil(hex.length / 64) * 64, "0")}`;
}

/** A bytes32 symbol: the first 32 bytes of the text, zero-padded. */
function bytes32(text: string): string {
  return `0x${Buffer.from(text, "utf8").subarray(0, 32).toString("hex").padEnd(64, "0")}`;
}

/**
 * eth_getBalance, and eth_call for decimals(), symbol(), name() and balanceOf(address) of
 * the world's fungible tokens, over the simulated chain at any block up to the head. Other
 * contracts of the world revert every call (so a collection or a router is "not a token");
 * an address without code answers empty data, as a node does.
 */
export function answerStateRpc(world: World, chain: Chain, balances: Balances, method: string, params: unknown): RpcAnswer | undefined {
  if (method !== "eth_getBalance" && method !== "eth_call") return undefined;
  if (!Array.isArray(params) || params.length < 1) return invalid("missing value for required argument 0");
  const block = blockOf(chain, params[1] ?? "latest");
  if (typeof block !== "number") return block;

  if (method === "eth_getBalance") {
    const address = params[0];
    if (typeof address !== "string" || !ADDRESS.test(address)) return invalid("invalid argument 0: hex string has length != 40");
    const kei = balances.kaiaAt(address, block);
    // A simulator invariant, not a node behaviour: say so loudly rather than serve nonsense.
    if (kei < 0n) return { error: { code: -32603, message: `simulator: the balance of ${address.toLowerCase()} is negative at block ${block} (the chosen records spend more than it received)` } };
    return { result: `0x${kei.toString(16)}` };
  }

  const call = params[0] as { to?: unknown; data?: unknown; input?: unknown } | null;
  if (typeof call !== "object" || call === null || typeof call.to !== "string" || !ADDRESS.test(call.to)) return invalid("invalid argument 0: the call needs a `to` address");
  const dataField = call.data ?? call.input ?? "0x";
  if (typeof dataField !== "string" || !/^0x(?:[0-9a-fA-F]{2})*$/.test(dataField)) return invalid("invalid argument 0: data is not hex bytes");
  const to = call.to.toLowerCase();
  const data = dataField.toLowerCase();
  const selector = data.slice(0, 10);

  const token = world.tokens.find((t) => t.address === to);
  if (token) {
    if (selector === SELECTORS.decimals && data.length === 10) return { result: `0x${uint256Hex(BigInt(token.decimals))}` };
    if (selector === SELECTORS.symbol && data.length === 10) return { result: token.symbolAsBytes32 ? bytes32(token.symbol) : abiString(token.symbol) };
    if (selector === SELECTORS.name && data.length === 10) return { result: abiString(token.name) };
    if (selector === SELECTORS.balanceOf && data.length === 10 + 64 && /^0{24}$/.test(data.slice(10, 34))) {
      return { result: `0x${uint256Hex(balances.tokenAt(to, `0x${data.slice(34)}`, block))}` };
    }
    return REVERTED;
  }
  const collection = world.collections.find((c) => c.address === to);
  if (collection) {
    if (selector === SELECTORS.symbol && data.length === 10) return { result: abiString(collection.symbol) };
    if (selector === SELECTORS.name && data.length === 10) return { result: abiString(collection.name) };
    return REVERTED;
  }
  if ([...world.routers, world.proxy, world.implementation, world.factory].includes(to)) return REVERTED;
  return { result: "0x" };
}

/** A block parameter as a block number (before the first block: genesis), or the error a node gives. */
function blockOf(chain: Chain, tag: unknown): number | RpcAnswer {
  if (tag === "latest" || tag === "pending" || tag === "safe" || tag === "finalized") return chain.head;
  if (tag === "earliest") return chain.startBlock - 1;
  if (typeof tag === "string" && /^0x[0-9a-fA-F]{1,13}$/.test(tag)) {
    const n = Number.parseInt(tag.slice(2), 16);
    if (n > chain.head) return { error: { code: -32000, message: "header not found" } };
    return n;
  }
  return invalid(`invalid argument 1: ${JSON.stringify(tag)?.slice(0, 40)} is not a block number or tag`);
}
