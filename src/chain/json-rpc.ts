import { Pool } from "undici";
import type { Common } from "../common/common.js";
import { KaiawatchError, describeError, isAbortError } from "../common/errors.js";
import { ExplorerDeadlineError, ExplorerHttpError, ExplorerResponseTooLargeError, ExplorerTimeoutError } from "../explorer/errors.js";
import { excerptOf, httpErrorOf, sendRequest } from "../explorer/http.js";
import { createRateLimiter, type RateLimiter, type RateLimiterTime } from "../explorer/rate-limiter.js";
import { linkSignals } from "../common/signals.js";
import { withRetries } from "../explorer/retry.js";
import { USER_AGENT } from "../explorer/user-agent.js";

/**
 * A JSON-RPC request failed on the way: the node unreachable after the retries, a non-2xx
 * answer, an answer too large, or one that is not a JSON-RPC response. `cause` holds the
 * transport error (an ExplorerError, same classes as the explorer client's).
 */
export class JsonRpcError extends KaiawatchError {
  override name = "JsonRpcError";
  readonly method: string;
  constructor(method: string, message: string, options: { cause?: unknown } = {}) {
    super("KW_RPC", message, options);
    this.method = method;
  }
}

/**
 * The node answered with a JSON-RPC error object. Not retried: the same question gets the
 * same answer (a revert, an unknown method, a bad parameter). `data` is the revert data, if
 * any, cut short: it is written by whoever deployed the contract.
 */
export class JsonRpcCallError extends KaiawatchError {
  override name = "JsonRpcCallError";
  readonly method: string;
  readonly rpcCode: number | undefined;
  readonly rpcMessage: string;
  readonly data: string | undefined;
  constructor(method: string, host: string, error: { code?: unknown; message?: unknown; data?: unknown }) {
    const rpcCode = typeof error.code === "number" ? error.code : undefined;
    const rpcMessage = typeof error.message === "string" ? error.message.slice(0, 200) : "";
    super("KW_RPC_CALL", `${method} at ${host} returned JSON-RPC error ${rpcCode ?? "?"}: ${JSON.stringify(rpcMessage)}`);
    this.method = method;
    this.rpcCode = rpcCode;
    this.rpcMessage = rpcMessage;
    this.data = typeof error.data === "string" ? error.data.slice(0, 1024) : undefined;
  }

  /**
   * The call executed and reverted. Geth answers code 3 with revert data; Kaia nodes and
   * older clients answer -32000 with "execution reverted" (or "evm: execution reverted").
   */
  get isRevert(): boolean {
    return this.rpcCode === 3 || /revert/i.test(this.rpcMessage);
  }
}

export interface JsonRpcOptions {
  /** A Kaia JSON-RPC endpoint, e.g. https://public-en.node.kaia.io */
  rpcUrl: string;
  /**
   * Requests per second to this endpoint, shared by every caller of this client (the head
   * reader and the balance and token reads). Public endpoints throttle; 0 or absent: no limit.
   * The daemon's is `chain.requests_per_second`.
   */
  requestsPerSecond?: number;
  /** A limiter to use instead of one made from requestsPerSecond (tests; or one shared with other clients of the same endpoint). */
  rateLimiter?: RateLimiter;
  /** Connect, headers and body timeout each. Default 10,000. */
  timeoutMs?: number;
  /** Longest one request may take, to its last byte (then retried). Default 30,000. */
  deadlineMs?: number;
  /** Largest answer read. Default 1 MiB: a symbol() is written by strangers and may be huge. */
  maxBytes?: number;
  /** Default 5. */
  maxRetries?: number;
  /** Default 500. */
  retryBaseMs?: number;
  /** Default 30,000. */
  retryMaxMs?: number;
  /** Replaceable in tests: the rate limiter's monotonic clock and its wait. */
  time?: RateLimiterTime;
  /** Replaceable in tests (the backoff's jitter). */
  random?: () => number;
}

export interface JsonRpc {
  /** The host of the endpoint, for messages (never the path or query: they often carry a key). */
  readonly host: string;
  /** One JSON-RPC call; resolves to its `result` (which may be null). */
  call(method: string, params: readonly unknown[], signal?: AbortSignal): Promise<unknown>;
  close(): Promise<void>;
}

/** When an attempt passed the rate limiter (performance.now), for its duration: the wait is not the node's time. */
interface Started {
  at: number | undefined;
}

/** Why an attempt failed, as the `outcome` label of kaiawatch_rpc_requests_total. */
function outcomeOf(error: unknown): string {
  if (error instanceof JsonRpcCallError) return "rpc_error";
  if (error instanceof JsonRpcError) return "bad_response";
  if (error instanceof ExplorerHttpError) return "http_error";
  if (error instanceof ExplorerResponseTooLargeError) return "too_large";
  if (error instanceof ExplorerTimeoutError || error instanceof ExplorerDeadlineError) return "timeout";
  if (isAbortError(error)) return "aborted";
  return "network";
}

/**
 * The JSON-RPC transport every chain read goes through: one keep-alive pool per endpoint,
 * a rate limit, the explorer client's retry policy for transient failures (network, timeout,
 * 408/429/5xx with Retry-After), a size cap and a deadline per request, and a count of every
 * attempt by method and outcome. A JSON-RPC error object or a malformed answer is not
 * retried: the caller decides (the head reader asks again next tick; a revert is an answer).
 */
export function createJsonRpc(common: Common, options: JsonRpcOptions): JsonRpc {
  let url: URL;
  try {
    url = new URL(options.rpcUrl);
  } catch {
    throw new JsonRpcError("", "the JSON-RPC URL is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new JsonRpcError("", `the JSON-RPC URL must be http or https, not ${url.protocol}`);
  const host = url.host;
  const timeout = options.timeoutMs ?? 10_000;
  const pool = new Pool(url.origin, { connect: { timeout }, headersTimeout: timeout, bodyTimeout: timeout, keepAliveTimeout: 15_000 });
  const headers = { "content-type": "application/json", accept: "application/json", "user-agent": USER_AGENT };
  const limiter: RateLimiter = options.rateLimiter ?? createRateLimiter(options.requestsPerSecond ?? 0, options.time);
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  let nextId = 1;

  async function attempt(method: string, params: readonly unknown[], signal: AbortSignal, started: Started): Promise<unknown> {
    await limiter.acquire(signal);
    started.at = performance.now();
    const id = nextId++;
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    const response = await sendRequest(pool, { operation: method, method: "POST", path: url.pathname + url.search, headers, body, signal, maxBytes, deadlineMs: options.deadlineMs ?? 30_000 });
    if (response.status < 200 || response.status > 299) throw httpErrorOf(method, response, common.now());
    let value: unknown;
    try {
      value = JSON.parse(response.text);
    } catch (error) {
      throw new JsonRpcError(method, `${method} at ${host} answered with something that is not JSON: ${JSON.stringify(excerptOf(response.text, 80))}`, { cause: error });
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new JsonRpcError(method, `${method} at ${host} answered with something that is not a JSON-RPC response`);
    const answer = value as { id?: unknown; result?: unknown; error?: unknown };
    if (answer.error != null) {
      const error = typeof answer.error === "object" ? (answer.error as Record<string, unknown>) : { message: String(answer.error) };
      throw new JsonRpcCallError(method, host, error);
    }
    // The id is not checked: one call per HTTP exchange, so the answer is this call's, and
    // some gateways answer every request with id 1.
    if (!("result" in answer)) throw new JsonRpcError(method, `${method} at ${host} answered with neither a result nor an error`);
    return answer.result;
  }

  return {
    host,
    async call(method, params, signal) {
      const linked = linkSignals(common.signal, signal);
      try {
        return await withRetries(
          async () => {
            const started: Started = { at: undefined };
            try {
              const result = await attempt(method, params, linked.signal, started);
              common.metrics.rpcRequests.inc({ method, outcome: "ok" });
              return result;
            } catch (error) {
              common.metrics.rpcRequests.inc({ method, outcome: outcomeOf(error) });
              throw error;
            } finally {
              if (started.at !== undefined) common.metrics.rpcRequestDuration.observe({ method }, (performance.now() - started.at) / 1000);
            }
          },
          {
            maxRetries: options.maxRetries ?? 5,
            baseMs: options.retryBaseMs ?? 500,
            maxMs: options.retryMaxMs ?? 30_000,
            signal: linked.signal,
            ...(options.random ? { random: options.random } : {}),
            onRetry(error, n, delayMs) {
              common.metrics.rpcRetries.inc({ method });
              const fields = { method, attempt: n, delay_ms: delayMs, error: describeError(error) };
              if (n === 1) common.logger.debug(fields, "JSON-RPC request failed; retrying");
              else common.logger.warn(fields, "JSON-RPC request failed again; retrying");
            },
          },
        );
      } catch (error) {
        if (error instanceof JsonRpcError || error instanceof JsonRpcCallError || isAbortError(error)) throw error;
        throw new JsonRpcError(method, `${method} failed at ${host}: ${describeError(error)}`, { cause: error });
      } finally {
        linked.dispose();
      }
    },
    async close() {
      await pool.close();
    },
  };
}
