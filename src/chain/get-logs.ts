import type { Common } from "../common/common.js";
import { JsonRpcCallError, JsonRpcError, JsonRpcHttpError, JsonRpcResponseTooLargeError, type JsonRpc } from "./json-rpc.js";

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

/**
 * The largest request body a Kaia node reads by default (`--maxRequestContentLength`,
 * common/variables.go: 512 KiB); over it the node answers HTTP 413 "content length too large
 * (N>524288)" before reading the call. About 11,000 addresses, or 7,500 topics, in one query.
 */
export const KAIA_MAX_REQUEST_BYTES = 512 * 1024;

/** A log query's JSON-RPC envelope and range (`{"jsonrpc":"2.0","id":…,"method":"eth_getLogs","params":[{"fromBlock":…}]}`), rounded up. */
const QUERY_ENVELOPE_BYTES = 200;

/** An upper bound of the bytes of a filter's query as the JSON-RPC client sends it (its lists are ASCII hex). */
export function logQueryBytes(filter: LogFilter): number {
  let bytes = QUERY_ENVELOPE_BYTES;
  for (const address of filter.address ?? []) bytes += address.length + 3;
  for (const position of filter.topics ?? []) bytes += position === null ? 5 : position.reduce((sum, topic) => sum + topic.length + 3, 3);
  return bytes;
}

/**
 * A filter as queries of at most `maxBytes` each. Its longest "or" list (the addresses, or
 * one topic position's) is cut into as few parts as fit beside the rest, or halved when the
 * rest alone is too long; a query of single entries is sent as it is. Cutting one "or" list
 * partitions what the filter matches, so the parts together match exactly what it does.
 */
export function logQueryBatches(filter: LogFilter, maxBytes: number): LogFilter[] {
  const bytes = logQueryBytes(filter);
  if (bytes <= maxBytes) return [filter];
  const lists: { bytes: number; entries: readonly string[]; rebuild: (part: readonly string[]) => LogFilter }[] = [];
  if (filter.address !== undefined && filter.address.length > 1) lists.push({ bytes: logQueryBytes({ address: filter.address }) - QUERY_ENVELOPE_BYTES, entries: filter.address, rebuild: (part) => ({ ...filter, address: part }) });
  filter.topics?.forEach((position, i) => {
    if (position === null || position.length < 2) return;
    const topics = filter.topics as readonly (readonly string[] | null)[];
    lists.push({ bytes: logQueryBytes({ topics: [position] }) - QUERY_ENVELOPE_BYTES, entries: position, rebuild: (part) => ({ ...filter, topics: topics.map((t, j) => (j === i ? part : t)) }) });
  });
  const longest = lists.sort((a, b) => b.bytes - a.bytes)[0];
  if (longest === undefined) return [filter];
  // A loop, not Math.max(...entries): a spread of 100,000 arguments overflows the stack.
  let entryBytes = 0;
  for (const entry of longest.entries) entryBytes = Math.max(entryBytes, entry.length + 3);
  const perPart = Math.floor((maxBytes - (bytes - longest.bytes) - 3) / entryBytes);
  const size = perPart >= 1 ? perPart : Math.ceil(longest.entries.length / 2);
  const parts: LogFilter[] = [];
  for (let i = 0; i < longest.entries.length; i += size) parts.push(...logQueryBatches(longest.rebuild(longest.entries.slice(i, i + size)), maxBytes));
  return parts;
}

/** Kaia's 413 names its body limit: "content length too large (600000>524288)". */
const BODY_LIMIT = /content length too large \(\d+>(\d+)\)/i;

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
 * The node's logs of a block range for many filters at once: one eth_getLogs per filter (cut
 * into queries of at most `maxRequestBytes`, by logQueryBatches), merged into one list in
 * chain order. A query the node refuses as too large (its result or time limit, a gateway's
 * range limit, or an answer over the client's size cap) is asked again in halves: the range
 * down to one block, then the address list; each half is a complete query of its part, so no
 * log is lost at a split. A query whose body the node refuses (HTTP 413) is cut smaller. A
 * range or body limit the node names is remembered and applied up front. Every log is
 * checked; a log the node marks `removed` (a reorg's, which Kaia's immediate finality should
 * never show) is dropped and counted.
 */
export function createLogReader(common: Common, options: { rpc: JsonRpc; maxRequestBytes?: number }): LogReader {
  const { rpc } = options;
  let maxRequestBytes = options.maxRequestBytes ?? KAIA_MAX_REQUEST_BYTES;
  if (!Number.isSafeInteger(maxRequestBytes) || maxRequestBytes < QUERY_ENVELOPE_BYTES) throw new JsonRpcError(METHOD, `maxRequestBytes must be a whole number of at least ${QUERY_ENVELOPE_BYTES}, not ${maxRequestBytes}`);
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
    const wanted = filter.address === undefined ? undefined : new Set(filter.address.map((a) => a.toLowerCase()));
    const logs: NodeLog[] = [];
    for (const value of result as unknown[]) {
      const log = checkedLog(value, range, fail);
      if (log === "removed") common.metrics.nodeLogsRemoved.inc();
      else if (wanted !== undefined && !wanted.has(log.address)) fail(`a log of ${log.address}, not one of the addresses asked for`);
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
      if (error instanceof JsonRpcHttpError && error.status === 413) {
        // The body was too long for the node: the limit it names (or this body with half its lists) from now on.
        const named = BODY_LIMIT.exec(error.message);
        const limit = Math.min(maxRequestBytes, named ? Number(named[1]) : QUERY_ENVELOPE_BYTES + Math.floor((logQueryBytes(filter) - QUERY_ENVELOPE_BYTES) / 2));
        const parts = logQueryBatches(filter, Math.max(limit, QUERY_ENVELOPE_BYTES));
        if (parts.length === 1) throw error;
        common.metrics.nodeLogQueries.inc({ outcome: "split" });
        maxRequestBytes = Math.max(limit, QUERY_ENVELOPE_BYTES);
        for (const part of parts) await querySplitting(range, part, signal, out);
        return;
      }
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

  return {
    async read(range, filters, signal) {
      if (range.to < range.from) return [];
      const logs: NodeLog[] = [];
      for (const filter of filters) {
        // An empty address list matches nothing (a node would read it as "any address").
        if (filter.address !== undefined && filter.address.length === 0) continue;
        for (const batch of logQueryBatches(filter, maxRequestBytes)) await querySplitting(range, batch, signal, logs);
      }
      const seen = new Map<string, NodeLog>();
      for (const log of logs) seen.set(`${log.blockNumber}:${log.logIndex}`, log);
      return [...seen.values()].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    },
  };
}
