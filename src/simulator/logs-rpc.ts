import { simulatedBlockHash } from "./block-rpc.js";
import type { Chain, LogRec } from "./chain.js";
import { eventLogJson } from "./serialize.js";
import type { RpcAnswer } from "./state-rpc.js";

/*
 * eth_getLogs and kaia_getLogs over the simulated chain, from the same LogRec the explorer's
 * operation 11 serves (serialize.ts eventLogJson gives both the topics and the data), in the
 * shape a Kaia node answers (blockchain/types/log.go, gen_log_json.go). Written here, not
 * imported from src/chain: the simulator is the reference the reader is tested against.
 */

const hex = (n: number) => `0x${n.toString(16)}`;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const TOPIC = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]{1,13}$/;

const invalid = (message: string): RpcAnswer => ({ error: { code: -32602, message } });

/** A filter as the node reads it: block bounds, addresses ("or"), topic positions (null: any; a list: "or"). */
export interface LogQuery {
  from: number;
  to: number;
  addresses: readonly string[] | undefined;
  topics: readonly (readonly string[] | null)[];
}

/** One log as a node emits it. */
export function nodeLogJson(rec: LogRec): Record<string, unknown> {
  const log = eventLogJson(rec);
  return {
    address: rec.contract,
    topics: log.topics.map((t) => t.toLowerCase()),
    data: log.data,
    blockNumber: hex(rec.block),
    transactionHash: rec.tx.hash,
    transactionIndex: hex(rec.tx.index),
    blockHash: simulatedBlockHash(rec.block),
    logIndex: hex(rec.logIndex),
    removed: false,
  };
}

function blockTag(chain: Chain, value: unknown, name: string): number | RpcAnswer {
  if (value === undefined || value === null || value === "latest" || value === "pending") return chain.head;
  if (value === "earliest") return chain.startBlock;
  if (typeof value === "string" && QUANTITY.test(value)) return Number.parseInt(value.slice(2), 16);
  return invalid(`invalid argument 0: ${name}: hex string without 0x prefix`);
}

/** The filter object of a getLogs call, or the error a node answers for a malformed one. */
export function parseLogQuery(chain: Chain, params: unknown): LogQuery | RpcAnswer {
  const raw = Array.isArray(params) ? params[0] : undefined;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return invalid("missing value for required argument 0");
  const f = raw as { fromBlock?: unknown; toBlock?: unknown; address?: unknown; topics?: unknown };
  const from = blockTag(chain, f.fromBlock, "fromBlock");
  if (typeof from !== "number") return from;
  const to = blockTag(chain, f.toBlock, "toBlock");
  if (typeof to !== "number") return to;
  let addresses: string[] | undefined;
  if (typeof f.address === "string") addresses = [f.address];
  else if (Array.isArray(f.address)) addresses = f.address as string[];
  else if (f.address !== undefined && f.address !== null) return invalid("invalid argument 0: invalid address");
  if (addresses?.some((a) => typeof a !== "string" || !ADDRESS.test(a))) return invalid("invalid argument 0: invalid address");
  const topics: (string[] | null)[] = [];
  if (f.topics !== undefined && f.topics !== null) {
    if (!Array.isArray(f.topics)) return invalid("invalid argument 0: invalid topic(s)");
    for (const position of f.topics as unknown[]) {
      const list = position === null ? null : typeof position === "string" ? [position] : Array.isArray(position) ? (position as unknown[]) : undefined;
      if (list === undefined || list?.some((t) => typeof t !== "string" || !TOPIC.test(t))) return invalid("invalid argument 0: invalid topic(s)");
      topics.push(list === null || list.length === 0 ? null : (list as string[]).map((t) => t.toLowerCase()));
    }
  }
  return { from, to, addresses: addresses?.map((a) => a.toLowerCase()), topics };
}

function matches(query: LogQuery, topics: readonly string[]): boolean {
  return query.topics.every((wanted, i) => wanted === null || (topics[i] !== undefined && wanted.includes(topics[i].toLowerCase())));
}

/**
 * Every log the query matches, in chain order (block, log index: the index counts the logs of
 * a block in transaction order). By address through the explorer's own per-contract index,
 * else block by block.
 */
export function matchingLogs(chain: Chain, query: LogQuery): LogRec[] {
  const to = Math.min(query.to, chain.head);
  const from = Math.max(query.from, chain.startBlock);
  if (to < from) return [];
  const candidates: LogRec[] = [];
  if (query.addresses !== undefined) {
    for (const address of new Set(query.addresses)) {
      const index = chain.logsByContract.get(address);
      if (index === undefined) continue;
      const [lo, hi] = index.range(from, to);
      for (let i = lo; i < hi; i++) candidates.push(index.items[i] as LogRec);
    }
  } else {
    for (let n = from; n <= to; n++) for (const tx of chain.block(n)?.txs ?? []) candidates.push(...tx.logs);
  }
  return candidates.filter((rec) => matches(query, eventLogJson(rec).topics)).sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
}

/** The limits a log query meets (SimulatorLimits), read at each request. */
export interface LogLimits {
  logResultLimit?: number | undefined;
  logBlockRangeLimit?: number | undefined;
  logTimeoutBlocks?: number | undefined;
}

// What a Kaia node answers past its limits (node/cn/filters/filter.go: plain errors, which its
// RPC server sends with the default code -32000), and a gateway past its range limit.
const nodeError = (message: string): RpcAnswer => ({ error: { code: -32000, message } });

export function answerLogsRpc(chain: Chain, method: string, params: unknown, limits: LogLimits): RpcAnswer | undefined {
  if (method !== "eth_getLogs" && method !== "kaia_getLogs" && method !== "klay_getLogs") return undefined;
  const query = parseLogQuery(chain, params);
  if ("error" in query || "result" in query) return query;
  const blocks = Math.min(query.to, chain.head) - query.from + 1;
  if (limits.logBlockRangeLimit !== undefined && limits.logBlockRangeLimit > 0 && blocks > limits.logBlockRangeLimit) return nodeError(`exceed maximum block range: ${limits.logBlockRangeLimit}`);
  if (limits.logTimeoutBlocks !== undefined && limits.logTimeoutBlocks > 0 && blocks > limits.logTimeoutBlocks) return nodeError("query timeout exceeded");
  const logs = matchingLogs(chain, query);
  // The node stops at the first block that takes it past the limit: exactly the limit is answered.
  const max = limits.logResultLimit;
  if (max !== undefined && max > 0 && logs.length > max) return nodeError(`query returned more than ${max} results`);
  return { result: logs.map(nodeLogJson) };
}
