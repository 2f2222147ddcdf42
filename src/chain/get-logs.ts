import type { Common } from "../common/common.js";
import { JsonRpcError, type JsonRpc } from "./json-rpc.js";

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

const METHOD = "eth_getLogs";
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
 * per batch of `maxAddresses` addresses), merged into one list in chain order. Every log is
 * checked; a log the node marks `removed` (a reorg's, which Kaia's immediate finality should
 * never show) is dropped and counted.
 */
export function createLogReader(common: Common, options: { rpc: JsonRpc; maxAddresses?: number }): LogReader {
  const { rpc } = options;
  const maxAddresses = options.maxAddresses ?? Number.POSITIVE_INFINITY;
  const fail = (message: string): never => {
    throw new NodeLogError(METHOD, rpc.host, message);
  };

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
      const seen = new Map<string, NodeLog>();
      for (const filter of filters) {
        // An empty address list matches nothing (a node would read it as "any address").
        if (filter.address !== undefined && filter.address.length === 0) continue;
        for (const batch of batches(filter)) {
          for (const log of await query(range, batch, signal)) seen.set(`${log.blockNumber}:${log.logIndex}`, log);
        }
      }
      return [...seen.values()].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    },
  };
}
