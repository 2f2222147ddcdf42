import type { Dispatcher } from "undici";
import type { Common } from "../common/common.js";
import { KaiawatchError, describeError, isAbortError } from "../common/errors.js";
import { HttpDeadlineError, HttpNetworkError, HttpResponseTooLargeError, HttpTimeoutError, RETRYABLE_STATUSES } from "../http/errors.js";
import { createPool } from "../http/pool.js";
import { excerptOf, retryAfterOfAnswer, sendRequest, type HttpResponse } from "../http/request.js";
import { createRateLimiter, type RateLimiter, type RateLimiterTime } from "../http/rate-limiter.js";
import { linkSignals } from "../common/signals.js";
import { withRetries } from "../http/retry.js";
import { USER_AGENT } from "../http/user-agent.js";

/**
 * A JSON-RPC request to the node failed: KW_RPC for an answer that is not a JSON-RPC
 * response (or a failure nothing below names), and one of the subclasses below, each with a
 * KW_RPC_… code of its own, for a failure on the way. A node failure is the node's: the shared
 * transport's neutral error is only the `cause`, and nothing here says "explorer".
 */
export class JsonRpcError extends KaiawatchError {
  override name = "JsonRpcError";
  readonly method: string;
  constructor(method: string, message: string, options: { cause?: unknown; code?: string } = {}) {
    super(options.code ?? "KW_RPC", message, options);
    this.method = method;
  }
}

/** The node could not be reached, or the connection broke before a complete answer (KW_RPC_NETWORK). */
export class JsonRpcNetworkError extends JsonRpcError {
  override name = "JsonRpcNetworkError";
  constructor(method: string, host: string, cause: HttpNetworkError) {
    super(method, `${method} at ${host}: ${cause.problem}`, { cause, code: "KW_RPC_NETWORK" });
  }
}

/** Connecting, waiting for the headers or reading the body took too long (KW_RPC_TIMEOUT), or the whole request its deadline (KW_RPC_DEADLINE). */
export class JsonRpcTimeoutError extends JsonRpcError {
  override name = "JsonRpcTimeoutError";
  constructor(method: string, host: string, cause: HttpTimeoutError | HttpDeadlineError) {
    super(method, `${method} at ${host}: ${cause.problem}`, { cause, code: cause instanceof HttpDeadlineError ? "KW_RPC_DEADLINE" : "KW_RPC_TIMEOUT" });
  }
}

/** The answer was larger than the client's maxBytes (KW_RPC_RESPONSE_TOO_LARGE). Not retried. */
export class JsonRpcResponseTooLargeError extends JsonRpcError {
  override name = "JsonRpcResponseTooLargeError";
  constructor(method: string, host: string, cause: HttpResponseTooLargeError) {
    super(method, `${method} at ${host}: ${cause.problem}`, { cause, code: "KW_RPC_RESPONSE_TOO_LARGE" });
  }
}

/**
 * The node (or a gateway before it) answered a non-2xx status (KW_RPC_HTTP); 408, 429 and 5xx
 * are retried. A 401 or 403 is the node refusing the credentials in `chain.rpc_url` (a key in
 * its path or query, a user and password): KW_RPC_REFUSED, naming the setting, never transient.
 */
export class JsonRpcHttpError extends JsonRpcError {
  override name = "JsonRpcHttpError";
  readonly status: number;
  /** The answer's Retry-After, in milliseconds from now. */
  readonly retryAfterMs: number | undefined;
  constructor(method: string, host: string, response: HttpResponse, nowMs: number) {
    const refused = response.status === 401 || response.status === 403;
    super(
      method,
      `${method} at ${host}: HTTP ${response.status} (${excerptOf(response.text, 120) || "no body"})${refused ? ": the node refuses chain.rpc_url's credentials (the key in its path or query, or its user and password); set chain.rpc_url to a URL the node accepts" : ""}`,
      { code: refused ? "KW_RPC_REFUSED" : "KW_RPC_HTTP" },
    );
    this.status = response.status;
    this.retryAfterMs = retryAfterOfAnswer(response, nowMs);
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

  /**
   * The node does not serve the method: it does not have it, or its namespace is closed (a
   * public endpoint's `debug`). Code -32601, or the texts nodes and gateways give for it.
   */
  get isMethodUnavailable(): boolean {
    return this.rpcCode === -32601 || /not (exist|available|supported|allowed)|unsupported|disabled/i.test(this.rpcMessage);
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
  /**
   * The transport to send through (a Pool, an Agent, or one composed with interceptors); the
   * client then leaves closing it to the caller, and `timeoutMs` is its own. A keep-alive pool
   * of its own to the URL's origin when absent.
   */
  dispatcher?: Dispatcher;
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

/** What one call may change of the client's options. */
export interface JsonRpcCallOptions {
  /** Largest answer read for this call (a block's traces run to megabytes); the client's maxBytes otherwise. */
  maxBytes?: number;
}

export interface JsonRpc {
  /** The host of the endpoint, for messages (never the path or query: they often carry a key). */
  readonly host: string;
  /** One JSON-RPC call; resolves to its `result` (which may be null). */
  call(method: string, params: readonly unknown[], signal?: AbortSignal, options?: JsonRpcCallOptions): Promise<unknown>;
  close(): Promise<void>;
}

/** When an attempt passed the rate limiter (performance.now), for its duration: the wait is not the node's time. */
interface Started {
  at: number | undefined;
}

/** Why an attempt failed, as the `outcome` label of kaiawatch_rpc_requests_total. */
function outcomeOf(error: unknown): string {
  if (error instanceof JsonRpcCallError) return "rpc_error";
  if (error instanceof JsonRpcHttpError) return "http_error";
  if (error instanceof JsonRpcResponseTooLargeError) return "too_large";
  if (error instanceof JsonRpcTimeoutError) return "timeout";
  if (error instanceof JsonRpcNetworkError) return "network";
  if (error instanceof JsonRpcError) return "bad_response";
  if (isAbortError(error)) return "aborted";
  return "network";
}

/** The way to the node failed (any KW_RPC_… error but KW_RPC itself): not the node's answer, which a caller may judge. */
export function isNodeTransportError(error: unknown): error is JsonRpcError {
  return error instanceof JsonRpcNetworkError || error instanceof JsonRpcTimeoutError || error instanceof JsonRpcResponseTooLargeError || error instanceof JsonRpcHttpError;
}

/** A failure of the shared transport as the node's own error; anything else passes as it is. */
function nodeErrorOf(error: unknown, method: string, host: string): unknown {
  if (error instanceof HttpNetworkError) return new JsonRpcNetworkError(method, host, error);
  if (error instanceof HttpTimeoutError || error instanceof HttpDeadlineError) return new JsonRpcTimeoutError(method, host, error);
  if (error instanceof HttpResponseTooLargeError) return new JsonRpcResponseTooLargeError(method, host, error);
  return error;
}

/** Worth another attempt: the way to the node failed, or it answered 408, 429 or 5xx. A JSON-RPC error object or a malformed answer is not. */
function shouldRetry(error: unknown): boolean {
  if (error instanceof JsonRpcNetworkError || error instanceof JsonRpcTimeoutError) return true;
  if (error instanceof JsonRpcHttpError) return RETRYABLE_STATUSES.has(error.status);
  return false;
}

/**
 * The JSON-RPC client every chain read goes through, over the transport the explorer client
 * uses too (src/http): one keep-alive pool per endpoint (or the dispatcher handed in), a rate
 * limit, the same retry policy for transient failures (network, timeout,
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
  const owned = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? createPool(url.origin, { connectTimeoutMs: timeout, headersTimeoutMs: timeout, bodyTimeoutMs: timeout });
  const headers = { "content-type": "application/json", accept: "application/json", "user-agent": USER_AGENT };
  const limiter: RateLimiter = options.rateLimiter ?? createRateLimiter(options.requestsPerSecond ?? 0, options.time);
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  let nextId = 1;

  async function attempt(method: string, params: readonly unknown[], signal: AbortSignal, started: Started, maxBytes: number): Promise<unknown> {
    await limiter.acquire(signal);
    started.at = performance.now();
    const id = nextId++;
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    let response: HttpResponse;
    try {
      response = await sendRequest(dispatcher, { operation: method, method: "POST", origin: url.origin, path: url.pathname + url.search, headers, body, signal, maxBytes, deadlineMs: options.deadlineMs ?? 30_000 });
    } catch (error) {
      throw nodeErrorOf(error, method, host);
    }
    if (response.status < 200 || response.status > 299) throw new JsonRpcHttpError(method, host, response, common.now());
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
    async call(method, params, signal, callOptions) {
      const linked = linkSignals(common.signal, signal);
      try {
        return await withRetries(
          async () => {
            const started: Started = { at: undefined };
            try {
              const result = await attempt(method, params, linked.signal, started, callOptions?.maxBytes ?? maxBytes);
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
            shouldRetry,
            retryAfterOf: (error) => (error instanceof JsonRpcHttpError ? error.retryAfterMs : undefined),
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
      if (owned) await dispatcher.close();
    },
  };
}
