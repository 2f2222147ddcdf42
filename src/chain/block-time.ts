import type { JsonRpc } from "./json-rpc.js";
import { ChainReadError } from "./chain-reads.js";

/** Reads the timestamp of a block, in seconds since the epoch. */
export type BlockTimeReader = (block: number, signal: AbortSignal) => Promise<number>;

/**
 * The timestamp of a block (eth_getBlockByNumber without its transactions), in seconds
 * since the epoch: the block time an absence rule counts in (docs/absence.md), never the
 * wall clock, so that a daemon that was down or is catching up measures the chain's time.
 * Strict: a block the node does not have, or an answer of another block, is an error (the
 * window is not committed and the next tick asks again).
 */
export async function readBlockTime(rpc: JsonRpc, block: number, signal?: AbortSignal): Promise<number> {
  if (!Number.isSafeInteger(block) || block < 0) throw new ChainReadError(`block ${String(block)} is not a block number`);
  const result = await rpc.call("eth_getBlockByNumber", [`0x${block.toString(16)}`, false], signal);
  if (result === null) throw new ChainReadError(`eth_getBlockByNumber at ${rpc.host}: the node has no block ${block}`);
  const header = typeof result === "object" ? (result as { number?: unknown; timestamp?: unknown }) : {};
  const number = quantityOf(header.number);
  const timestamp = quantityOf(header.timestamp);
  if (number !== block || timestamp === undefined) {
    throw new ChainReadError(`eth_getBlockByNumber at ${rpc.host} returned ${JSON.stringify(result)?.slice(0, 120) ?? "no result"} for block ${block}, not its header with a timestamp`);
  }
  return timestamp;
}

function quantityOf(value: unknown): number | undefined {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]{1,13}$/.test(value)) return undefined;
  return Number.parseInt(value.slice(2), 16);
}

/** A reader that remembers the times it read (a block's time never changes: Kaia has no reorgs), up to `max` blocks. */
export function cachedBlockTimes(read: BlockTimeReader, max = 4096): BlockTimeReader {
  const cache = new Map<number, number>();
  return async (block, signal) => {
    const known = cache.get(block);
    if (known !== undefined) return known;
    const time = await read(block, signal);
    if (cache.size >= max) cache.delete(cache.keys().next().value as number);
    cache.set(block, time);
    return time;
  };
}
