import { Pool } from "undici";
import type { Common } from "../common/common.js";
import { KaiawatchError, describeError, isAbortError } from "../common/errors.js";
import { httpErrorOf, sendRequest } from "../explorer/http.js";
import { linkSignals, withRetries } from "../explorer/retry.js";
import { USER_AGENT } from "../explorer/user-agent.js";

/** The chain head could not be read: a JSON-RPC error, a result that is not a block number, or the node unreachable. */
export class ChainHeadError extends KaiawatchError {
  override name = "ChainHeadError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("KW_CHAIN_HEAD", message, options);
  }
}

export interface HeadReaderOptions {
  /** A Kaia JSON-RPC endpoint, e.g. https://public-en.node.kaia.io */
  rpcUrl: string;
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
 * Reads the chain head with JSON-RPC `eth_blockNumber`, retrying transient failures with the
 * explorer client's policy (same errors, same shouldRetry, same backoff). A JSON-RPC error
 * or a malformed result is not retried: the next tick asks again. Messages name the host
 * only: hosted RPC URLs often carry a key in their path or query.
 */
export function createHeadReader(common: Common, options: HeadReaderOptions): HeadReader {
  let url: URL;
  try {
    url = new URL(options.rpcUrl);
  } catch {
    throw new ChainHeadError("the JSON-RPC URL is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ChainHeadError(`the JSON-RPC URL must be http or https, not ${url.protocol}`);
  const timeout = options.timeoutMs ?? 10_000;
  const pool = new Pool(url.origin, { connect: { timeout }, headersTimeout: timeout, bodyTimeout: timeout, keepAliveTimeout: 15_000 });
  const headers = { "content-type": "application/json", accept: "application/json", "user-agent": USER_AGENT };
  let nextId = 1;

  async function attempt(signal: AbortSignal): Promise<number> {
    const body = JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "eth_blockNumber", params: [] });
    const response = await sendRequest(pool, { operation: "eth_blockNumber", method: "POST", path: url.pathname + url.search, headers, body, signal, maxBytes: MAX_BYTES, deadlineMs: options.deadlineMs ?? 30_000 });
    if (response.status < 200 || response.status > 299) throw httpErrorOf("eth_blockNumber", response, Date.now());
    return parseBlockNumber(response.text);
  }

  return {
    async blockNumber(signal) {
      const linked = linkSignals(common.signal, signal);
      try {
        return await withRetries(() => attempt(linked.signal), {
          maxRetries: options.maxRetries ?? 5,
          baseMs: options.retryBaseMs ?? 500,
          maxMs: options.retryMaxMs ?? 30_000,
          signal: linked.signal,
          onRetry(error, n, delayMs) {
            const fields = { operation: "eth_blockNumber", attempt: n, delay_ms: delayMs, error: describeError(error) };
            if (n === 1) common.logger.debug(fields, "chain head request failed; retrying");
            else common.logger.warn(fields, "chain head request failed again; retrying");
          },
        });
      } catch (error) {
        if (error instanceof ChainHeadError || isAbortError(error)) throw error;
        throw new ChainHeadError(`eth_blockNumber failed at ${url.host}: ${describeError(error)}`, { cause: error });
      } finally {
        linked.dispose();
      }
    },
    async close() {
      await pool.close();
    },
  };
}

function parseBlockNumber(text: string): number {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ChainHeadError(`eth_blockNumber answered with something that is not JSON: ${JSON.stringify(text.slice(0, 80))}`, { cause: error });
  }
  if (typeof value !== "object" || value === null) throw new ChainHeadError("eth_blockNumber answered with something that is not a JSON-RPC response");
  const { result, error } = value as { result?: unknown; error?: unknown };
  if (error != null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    throw new ChainHeadError(`eth_blockNumber returned JSON-RPC error ${String(code)}: ${String(message).slice(0, 200)}`);
  }
  if (typeof result !== "string" || !/^0x[0-9a-fA-F]{1,16}$/.test(result)) {
    throw new ChainHeadError(`eth_blockNumber returned ${JSON.stringify(result)?.slice(0, 80) ?? "no result"}, not a hex block number`);
  }
  const block = Number.parseInt(result.slice(2), 16);
  if (!Number.isSafeInteger(block)) throw new ChainHeadError(`eth_blockNumber returned ${result}, beyond a safe integer`);
  return block;
}
