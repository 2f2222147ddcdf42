import { createHash } from "node:crypto";
import type { Chain } from "./chain.js";
import type { RpcAnswer } from "./state-rpc.js";

/**
 * The hash the simulator gives a block, stable for its number (the simulated chain has no
 * reorgs): the same in a block and in its transactions' receipts, as a node's.
 */
export function simulatedBlockHash(block: number): string {
  return `0x${createHash("sha256").update(`kaiawatch-simulator-block:${block}`).digest("hex")}`;
}

/**
 * The block a by-number method's first parameter names, "latest" or a 0x-hex number (not
 * checked against the head: each method answers a missing block its own way), or the error a
 * node gives for anything else.
 */
export function blockNumberParam(chain: Chain, params: unknown): number | RpcAnswer {
  const tag = Array.isArray(params) ? params[0] : undefined;
  if (tag === "latest") return chain.head;
  if (typeof tag === "string" && /^0x[0-9a-fA-F]{1,13}$/.test(tag)) return Number.parseInt(tag.slice(2), 16);
  return { error: { code: -32602, message: "invalid argument 0: hex string without 0x prefix" } };
}

/**
 * eth_getBlockByNumber (and kaia_/klay_getBlockByNumber) with the fields kaiawatch reads:
 * the number and timestamp (seconds, hex), with the hash, parent hash and the transaction
 * hashes as a node sends them. A block past the head answers null, as a node does.
 */
export function answerBlockRpc(chain: Chain, method: string, params: unknown): RpcAnswer | undefined {
  if (method !== "eth_getBlockByNumber" && method !== "kaia_getBlockByNumber" && method !== "klay_getBlockByNumber") return undefined;
  const number = blockNumberParam(chain, params);
  if (typeof number !== "number") return number;
  const info = chain.block(number);
  if (info === undefined) return { result: null };
  const seconds = Math.floor(Date.parse(info.datetime) / 1000);
  return {
    result: {
      number: `0x${number.toString(16)}`,
      hash: simulatedBlockHash(number),
      parentHash: simulatedBlockHash(number - 1),
      timestamp: `0x${seconds.toString(16)}`,
      transactions: info.txs.map((tx) => tx.hash),
    },
  };
}
