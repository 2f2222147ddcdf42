import { KaiawatchError } from "../common/errors.js";

/**
 * What can go wrong on the way, whoever asked: the transport's errors name the request, not
 * the service. Each client turns them into its own (the explorer's KW_EXPLORER_…, the node's
 * KW_RPC_…), so that a log line or /readyz says which service failed; the neutral error is
 * what a client that does not translate would see.
 */
export class HttpTransportError extends KaiawatchError {
  override name = "HttpTransportError";
  /** Names the request (an explorer operation, a JSON-RPC method). */
  readonly request: string;
  /** What went wrong, without the request's name: what a client's own error says after its name for the request. */
  readonly problem: string;
  constructor(code: string, request: string, problem: string, options: { cause?: unknown } = {}) {
    super(code, `${request}: ${problem}`, options);
    this.request = request;
    this.problem = problem;
  }
}

/** The connection failed, was reset or refused before a complete answer arrived. */
export class HttpNetworkError extends HttpTransportError {
  override name = "HttpNetworkError";
  constructor(request: string, cause: unknown) {
    super("KW_HTTP_NETWORK", request, `network error (${causeText(cause)})`, { cause });
  }
}

export type TimeoutPhase = "connect" | "headers" | "body";

/** Connecting, waiting for the headers or reading the body took too long. */
export class HttpTimeoutError extends HttpTransportError {
  override name = "HttpTimeoutError";
  readonly phase: TimeoutPhase;
  constructor(request: string, phase: TimeoutPhase, cause: unknown) {
    super("KW_HTTP_TIMEOUT", request, `timed out waiting for the ${phase}`, { cause });
    this.phase = phase;
  }
}

/** The whole request, to the body's last byte, took longer than its deadline. */
export class HttpDeadlineError extends HttpTransportError {
  override name = "HttpDeadlineError";
  readonly deadlineMs: number;
  constructor(request: string, deadlineMs: number) {
    super("KW_HTTP_DEADLINE", request, `no complete answer within the request deadline of ${deadlineMs} ms`);
    this.deadlineMs = deadlineMs;
  }
}

/** The answer was larger than the request's maxBytes; reading stopped there. */
export class HttpResponseTooLargeError extends HttpTransportError {
  override name = "HttpResponseTooLargeError";
  readonly limit: number;
  /** The HTTP status of the oversized answer. */
  readonly status: number;
  constructor(request: string, limit: number, status: number) {
    super("KW_HTTP_RESPONSE_TOO_LARGE", request, `response larger than ${limit} bytes (HTTP ${status})`);
    this.limit = limit;
    this.status = status;
  }
}

/** HTTP statuses worth asking again, for any service: busy, rate limiting, or briefly down. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/** The cause of a network error for its message: the code (ECONNREFUSED, UND_ERR_SOCKET) and what it says. */
export function causeText(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}
