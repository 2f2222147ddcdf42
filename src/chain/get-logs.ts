import type { Common } from "../common/common.js";
import { JsonRpcCallError, JsonRpcError, JsonRpcResponseTooLargeError, type JsonRpc } from "./json-rpc.js";

/** One log query's filter as a node reads it: addresses "or"; per topic position null (any) or a list ("or"). */
export interface LogFilter {
  readonly address?: readonly string[];
  readonly topics?: readonly (readonly string[] | null)[];
}

/** A log as the node emitted it, checked: lowercase hex, quantities as numbers. */
export interface NodeLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  transactionIndex: number;
  /** The log's position in its block (not in its transaction). */
  logIndex: number;
}

export interface LogReader {
  /** Every log matching any of the filters in [from, to]: deduplicated by (blockNumber, logIndex), ascending chain order. */
  read(range: { from: number; to: number }, filters: readonly LogFilter[], signal: AbortSignal): Promise<NodeLog[]>;
}

/** The node answered a log that kaiawatch cannot read (KW_RPC_BAD_LOG). */
export class NodeLogError extends JsonRpcError {
  override name = "NodeLogError";
  constructor(method: string, host: string, message: string) {
    super(method, `${method} at ${host}: ${message}`, { code: "KW_RPC_BAD_LOG" });
  }
}

/**
 * One block of one address (or of a filter without addresses) still exceeds the node's limits
 * (KW_RPC_LOG_LIMIT): nothing smaller can be asked, so its logs cannot be read from this node.
 */
export class NodeLogLimitError extends JsonRpcError {
  override name = "NodeLogLimitError";
  constructor(method: string, host: string, block: number, cause: unknown) {
    super(method, `${method} at ${host}: block ${block} alone exceeds the node's log query limits for one address`, { code: "KW_RPC_LOG_LIMIT", cause });
  }
}

const METHOD = "eth_getLogs";

/*
 * What a node answers a log query too large for it, so that a smaller one may pass: Kaia's
 * result and time limits (node/cn/filters/filter.go, both -32000, both configurable:
 * --api.filter.getLogs.maxitems 10,000 and --api.filter.getLogs.deadline 10 s), the range
 * limit of gateways in front of public nodes ("exceed maximum block range: 5000"), and the
 * other providers' forms of the same refusals.
 */
const TOO_LARGE = /query returned more than \d+ results|query timeout exceeded|exceed(?:s|ed)? (?:the )?max(?:imum)? block range|block range (?:is )?too (?:large|wide)|range (?:is )?too large|log response size exceeded|too many (?:results|logs)/i;
const RANGE_LIMIT = /exceed(?:s|ed)? (?:the )?max(?:imum)? block range:? (\d+)/i;

/** The node refused the query for its size: a smaller one may pass. An answer over the client's own size cap counts too. */
function isTooLarge(error: unknown): boolean {
  if (error instanceof JsonRpcResponseTooLargeError) return true;
  return error instanceof JsonRpcCallError && TOO_LARGE.test(error.rpcMessage);
}
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]{0,12})$/;
const BYTES = /^0x(?:[0-9a-fA-F]{2})*$/;
const MAX_TOPICS = 4;

const hex = (n: number) => `0x${n.toString(16)}`;

/** One log of the node's answer, checked field by field; unknown fields are tolerated. */
function checkedLog(value: unknown, range: { from: number; to: number }, fail: (message: string) => never): NodeLog | "removed" {
  if (value === null || typeof value !== "object" || Array.isArray(value)) fail("a log that is not an object");
  const log = value as Record<string, unknown>;
  const quantity = (name: string): number => {
    const v = log[name];
    if (typeof v !== "string" || !QUANTITY.test(v)) fail(`a log whose ${name} is not a hex quantity: ${JSON.stringify(v)?.slice(0, 40)}`);
    return Number.parseInt(v.slice(2), 16);
  };
  const text = (name: string, pattern: RegExp, what: string): string => {
    const v = log[name];
    if (typeof v !== "string" || !pattern.test(v)) fail(`a log whose ${name} is not ${what}: ${JSON.stringify(v)?.slice(0, 80)}`);
    return v.toLowerCase();
  };
  if (log.removed !== undefined && typeof log.removed !== "boolean") fail("a log whose removed is not a boolean");
  const topics = log.topics;
  if (!Array.isArray(topics) || topics.length > MAX_TOPICS || topics.some((t) => typeof t !== "string" || !HASH.test(t))) fail(`a log whose topics are not up to ${MAX_TOPICS} 32-byte hashes`);
  const out: NodeLog = {
    address: text("address", ADDRESS, "a 20-byte address"),
    topics: (topics as string[]).map((t) => t.toLowerCase()),
    data: text("data", BYTES, "0x-prefixed hex bytes"),
    blockNumber: quantity("blockNumber"),
    blockHash: text("blockHash", HASH, "a 32-byte hash"),
    transactionHash: text("transactionHash", HASH, "a 32-byte hash"),
    transactionIndex: quantity("transactionIndex"),
    logIndex: quantity("logIndex"),
  };
  if (out.blockNumber < range.from || out.blockNumber > range.to) fail(`a log of block ${out.blockNumber}, outside the range asked for (${range.from}–${range.to})`);
  return log.removed === true ? "removed" : out;
}

/**
 * The node's logs of a block range for many filters at once: one eth_getLogs per filter (and
 * per batch of `maxAddresses` addresses), merged into one list in chain order. A query the
 * node refuses as too large (its result or time limit, a gateway's range limit, or an answer
 * over the client's size cap) is asked again in halves: the range down to one block, then the
 * address list; each half is a complete query of its part, so no log is lost at a split. A
 * range limit the node names is remembered and applied up front. Every log is checked; a log
 * the node marks `removed` (a reorg's, which Kaia's immediate finality should never show) is
 * dropped and counted.
 */
export function createLogReader(common: Common, options: { rpc: JsonRpc; maxAddresses?: number }): LogReader {
  const { rpc } = options;
  const maxAddresses = options.maxAddresses ?? Number.POSITIVE_INFINITY;
  const fail = (message: string): never => {
    throw new NodeLogError(METHOD, rpc.host, message);
  };

  // The widest range the node said it takes ("exceed maximum block range: N"), once it has.
  let maxRange = Number.POSITIVE_INFINITY;

  async function query(range: { from: number; to: number }, filter: LogFilter, signal: AbortSignal): Promise<NodeLog[]> {
    const params: Record<string, unknown> = { fromBlock: hex(range.from), toBlock: hex(range.to) };
    if (filter.address !== undefined) params.address = [...filter.address];
    if (filter.topics !== undefined && filter.topics.length > 0) params.topics = filter.topics.map((t) => (t === null ? null : [...t]));
    const result = await rpc.call(METHOD, [params], signal);
    if (!Array.isArray(result)) fail("an answer that is not a list of logs");
    const logs: NodeLog[] = [];
    for (const value of result as unknown[]) {
      const log = checkedLog(value, range, fail);
      if (log === "removed") common.metrics.nodeLogsRemoved.inc();
      else logs.push(log);
    }
    return logs;
  }

  /** Every log of the filter in the range, asked in halves while the node refuses the query as too large. */
  async function querySplitting(range: { from: number; to: number }, filter: LogFilter, signal: AbortSignal, out: NodeLog[]): Promise<void> {
    if (range.to - range.from + 1 > maxRange) {
      for (let from = range.from; from <= range.to; from += maxRange) await querySplitting({ from, to: Math.min(range.to, from + maxRange - 1) }, filter, signal, out);
      return;
    }
    let logs: NodeLog[];
    try {
      logs = await query(range, filter, signal);
    } catch (error) {
      if (!isTooLarge(error)) throw error;
      common.metrics.nodeLogQueries.inc({ outcome: "split" });
      const named = error instanceof JsonRpcCallError ? RANGE_LIMIT.exec(error.rpcMessage) : null;
      const limit = named ? Number(named[1]) : Number.NaN;
      if (Number.isSafeInteger(limit) && limit >= 1 && limit < range.to - range.from + 1) {
        maxRange = limit;
        return querySplitting(range, filter, signal, out);
      }
      if (range.to > range.from) {
        const middle = range.from + Math.floor((range.to - range.from) / 2);
        await querySplitting({ from: range.from, to: middle }, filter, signal, out);
        return querySplitting({ from: middle + 1, to: range.to }, filter, signal, out);
      }
      const addresses = filter.address;
      if (addresses !== undefined && addresses.length > 1) {
        const half = Math.ceil(addresses.length / 2);
        await querySplitting(range, { ...filter, address: addresses.slice(0, half) }, signal, out);
        return querySplitting(range, { ...filter, address: addresses.slice(half) }, signal, out);
      }
      throw new NodeLogLimitError(METHOD, rpc.host, range.from, error);
    }
    common.metrics.nodeLogQueries.inc({ outcome: "ok" });
    for (const log of logs) out.push(log);
  }

  /** A filter's address list in batches of at most maxAddresses; a filter with none as it is. */
  function batches(filter: LogFilter): LogFilter[] {
    const addresses = filter.address;
    if (addresses === undefined || addresses.length <= maxAddresses) return [filter];
    const out: LogFilter[] = [];
    for (let i = 0; i < addresses.length; i += maxAddresses) out.push({ ...filter, address: addresses.slice(i, i + maxAddresses) });
    return out;
  }

  return {
    async read(range, filters, signal) {
      if (range.to < range.from) return [];
      const logs: NodeLog[] = [];
      for (const filter of filters) {
        // An empty address list matches nothing (a node would read it as "any address").
        if (filter.address !== undefined && filter.address.length === 0) continue;
        for (const batch of batches(filter)) await querySplitting(range, batch, signal, logs);
      }
      const seen = new Map<string, NodeLog>();
      for (const log of logs) seen.set(`${log.blockNumber}:${log.logIndex}`, log);
      return [...seen.values()].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    },
  };
}
