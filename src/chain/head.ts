import type { Common } from "../common/common.js";
import { KaiawatchError, isAbortError } from "../common/errors.js";
import { JsonRpcCallError, JsonRpcError, createJsonRpc, isNodeTransportError, type JsonRpc } from "./json-rpc.js";

/**
 * The chain head was read but is unusable: a JSON-RPC error object, an answer that is not
 * JSON-RPC, a result that is not a block number. The node unreachable or answering non-2xx is
 * the JSON-RPC client's own error (KW_RPC_NETWORK, KW_RPC_HTTP, …), passed on as it is.
 */
export class ChainHeadError extends KaiawatchError {
  override name = "ChainHeadError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("KW_CHAIN_HEAD", message, options);
  }
}

export interface HeadReaderOptions {
  /** A Kaia JSON-RPC endpoint, e.g. https://public-en.node.kaia.io */
  rpcUrl: string;
  /**
   * A JSON-RPC client to share (its rate limit and pool) with the balance and token reads;
   * when given, the transport options below are its own and ignored here, and close() leaves it open.
   */
  rpc?: JsonRpc;
  /** Connect, headers and body timeout each. Default 10,000. */
  timeoutMs?: number;
  /** Longest one eth_blockNumber request may take, to its last byte (then retried). Default 30,000. */
  deadlineMs?: number;
  /** Default 5. */
  maxRetries?: number;
  /** Default 500. */
  retryBaseMs?: number;
  /** Default 30,000. */
  retryMaxMs?: number;
}

export interface HeadReader {
  /** The latest block number (eth_blockNumber). */
  blockNumber(signal?: AbortSignal): Promise<number>;
  close(): Promise<void>;
}

const MAX_BYTES = 64 * 1024;

/**
 * Reads the chain head with JSON-RPC `eth_blockNumber` through the JSON-RPC client (its
 * retry policy, a deadline and a size cap). A JSON-RPC error or a malformed result is not
 * retried: the next tick asks again. Messages name the host only: hosted RPC URLs often carry
 * a key in their path or query.
 */
export function createHeadReader(common: Common, options: HeadReaderOptions): HeadReader {
  const owned = options.rpc === undefined;
  let rpc: JsonRpc;
  try {
    rpc =
      options.rpc ??
      createJsonRpc(common, {
        rpcUrl: options.rpcUrl,
        maxBytes: MAX_BYTES,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
        ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
        ...(options.retryBaseMs !== undefined ? { retryBaseMs: options.retryBaseMs } : {}),
        ...(options.retryMaxMs !== undefined ? { retryMaxMs: options.retryMaxMs } : {}),
      });
  } catch (error) {
    throw new ChainHeadError(error instanceof Error ? error.message : String(error));
  }

  return {
    async blockNumber(signal) {
      let result: unknown;
      try {
        result = await rpc.call("eth_blockNumber", [], signal);
      } catch (error) {
        if (isAbortError(error)) throw error;
        if (error instanceof JsonRpcCallError) throw new ChainHeadError(`eth_blockNumber returned JSON-RPC error ${error.rpcCode ?? "?"}: ${error.rpcMessage}`, { cause: error });
        // The way to the node failed (KW_RPC_NETWORK, KW_RPC_HTTP, …): its own code is what the
        // log line and /readyz show, so that nobody reads a node outage as the explorer's.
        if (isNodeTransportError(error)) throw error;
        if (error instanceof JsonRpcError) throw new ChainHeadError(error.message, { cause: error });
        throw new ChainHeadError(`eth_blockNumber failed at ${rpc.host}`, { cause: error });
      }
      return parseBlockNumber(result);
    },
    async close() {
      if (owned) await rpc.close();
    },
  };
}

function parseBlockNumber(result: unknown): number {
  if (typeof result !== "string" || !/^0x[0-9a-fA-F]{1,16}$/.test(result)) {
    throw new ChainHeadError(`eth_blockNumber returned ${JSON.stringify(result)?.slice(0, 80) ?? "no result"}, not a hex block number`);
  }
  const block = Number.parseInt(result.slice(2), 16);
  if (!Number.isSafeInteger(block)) throw new ChainHeadError(`eth_blockNumber returned ${result}, beyond a safe integer`);
  return block;
}
