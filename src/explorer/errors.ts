import { KaiawatchError } from "../common/errors.js";
import { HttpDeadlineError, HttpNetworkError, HttpResponseTooLargeError, HttpTimeoutError, RETRYABLE_STATUSES, causeText, type TimeoutPhase } from "../http/errors.js";
import type { ApiErrorBody } from "./types.js";

/**
 * The explorer client's errors. Every one has a stable `code`; callers (and `shouldRetry`)
 * decide from the class, never from message text.
 */
export class ExplorerError extends KaiawatchError {
  override name = "ExplorerError";
  /** The operation (a key of OPERATIONS) the error belongs to, when there is one. */
  readonly operation: string | undefined;

  constructor(code: string, message: string, options: { operation?: string; cause?: unknown; details?: string } = {}) {
    super(code, message, options);
    this.operation = options.operation;
  }
}

export interface HttpErrorOptions {
  operation: string;
  status: number;
  body?: ApiErrorBody;
  retryAfterMs?: number;
  excerpt?: string;
}

/** A non-2xx answer. Carries the API's `{code,title,message}` body when it sent one. */
export class ExplorerHttpError extends ExplorerError {
  override name = "ExplorerHttpError";
  readonly status: number;
  readonly body: ApiErrorBody | undefined;
  /** The server's Retry-After, converted to milliseconds from now. */
  readonly retryAfterMs: number | undefined;

  constructor(options: HttpErrorOptions, code = "KW_EXPLORER_HTTP", explanation = "") {
    const { operation, status, body } = options;
    const what = body ? [body.code, body.message].filter(Boolean).join(": ") : options.excerpt || "no body";
    super(code, `${operation}: HTTP ${status} (${what})${explanation}`, { operation });
    this.status = status;
    this.body = body;
    this.retryAfterMs = options.retryAfterMs;
  }

  /** The API's error code, e.g. API_REQUEST_QUOTA_EXCEEDED, INVALID_REQUEST, UNAUTHORIZED_ACCESS. */
  get apiCode(): string | undefined {
    return this.body?.code;
  }

  get apiMessage(): string | undefined {
    return this.body?.message;
  }
}

/**
 * The explorer refuses the key (HTTP 401): a wrong, revoked or missing `explorer.api_key`. Not
 * a transient failure: every request gets the same answer until the key is changed, so the
 * message names the setting, and readiness and an operational alert say so at once.
 */
export class ExplorerKeyRefusedError extends ExplorerHttpError {
  override name = "ExplorerKeyRefusedError";
  constructor(options: HttpErrorOptions) {
    super(options, "KW_EXPLORER_KEY_REFUSED", ": the explorer refuses explorer.api_key (a KaiaScan Open API key, sent as Authorization: Bearer); set it to a valid key");
  }
}

/**
 * A 429 whose message says which quota ran out (klaytn/finder-api OpenApiRequestRateLimiter:
 * "Request quota exceeded. (type:requestPerDay, quotas:N)"): the per-second rate, or the
 * day's allowance. Neither carries a Retry-After.
 */
export type QuotaKind = "requestPerSecond" | "requestPerDay";

export function quotaOf(body: ApiErrorBody | undefined): { kind: QuotaKind | undefined; limit: number | undefined } {
  const message = body?.message ?? "";
  const kind = /type:\s*requestPerDay/.test(message) ? "requestPerDay" : /type:\s*requestPerSecond/.test(message) ? "requestPerSecond" : undefined;
  const quotas = /quotas:\s*(\d{1,15})/.exec(message);
  return { kind, limit: quotas ? Number(quotas[1]) : undefined };
}

/**
 * The explorer's daily quota for this key is spent (a 429 of type requestPerDay), or was
 * spent and kaiawatch has not asked again yet (nothing sent). Not retried: a request before
 * the quota resets only hears the same answer.
 */
export class ExplorerDailyQuotaError extends ExplorerError {
  override name = "ExplorerDailyQuotaError";
  /** The server's allowance, when its message said. */
  readonly limit: number | undefined;
  /** When kaiawatch asks the explorer again (ISO-8601). */
  readonly retryAt: string;
  constructor(operation: string, options: { limit: number | undefined; retryAt: string; sent: boolean }) {
    const allowance = options.limit === undefined ? "" : ` (${options.limit} a day)`;
    const what = options.sent ? `HTTP 429: the key's daily quota${allowance} is spent` : `not sent: the key's daily quota${allowance} was spent`;
    super("KW_EXPLORER_DAILY_QUOTA", `${operation}: ${what}; kaiawatch asks again at ${options.retryAt}`, { operation });
    this.limit = options.limit;
    this.retryAt = options.retryAt;
  }
}

/**
 * The key's plan does not include the operation (HTTP 403; operation 7 needs PRO_PLUS).
 * KaiaScan's refusal is not in its predecessor's public source; the predecessor answers a
 * refused authority with 403 FORBIDDEN "Please confirm your authority." (ApplicationErrorType),
 * and any 403 is taken as this. Not retried.
 */
export class ExplorerPlanError extends ExplorerHttpError {
  override name = "ExplorerPlanError";
  /** The plan the operation needs (operations.ts). */
  readonly needs: string;
  constructor(options: HttpErrorOptions, needs: string, number: number) {
    super(options, "KW_EXPLORER_PLAN", `: this key's plan does not include operation ${number}, which needs the ${needs} plan; check explorer.api_key and explorer.api_plan`);
    this.needs = needs;
  }
}

/** The connection failed, was reset or refused before a complete answer arrived. */
export class ExplorerNetworkError extends ExplorerError {
  override name = "ExplorerNetworkError";
  constructor(operation: string, cause: unknown) {
    super("KW_EXPLORER_NETWORK", `${operation}: network error (${causeText(cause)})`, { operation, cause });
  }
}

/** Connecting, waiting for the headers or reading the body took too long. */
export class ExplorerTimeoutError extends ExplorerError {
  override name = "ExplorerTimeoutError";
  constructor(operation: string, phase: TimeoutPhase, cause: unknown) {
    super("KW_EXPLORER_TIMEOUT", `${operation}: timed out waiting for the ${phase}`, { operation, cause });
  }
}

/**
 * The whole request (connecting, waiting, and reading every byte of the body) took longer
 * than its deadline. The per-phase timeouts bound silence only: a server sending one byte
 * every few seconds never trips them, and held a source for minutes with no log line.
 */
export class ExplorerDeadlineError extends ExplorerError {
  override name = "ExplorerDeadlineError";
  readonly deadlineMs: number;
  constructor(operation: string, deadlineMs: number) {
    super("KW_EXPLORER_DEADLINE", `${operation}: no complete answer within the request deadline of ${deadlineMs} ms`, { operation });
    this.deadlineMs = deadlineMs;
  }
}

/** A 2xx answer whose body is not JSON, or not JSON of a shape kaiawatch can read. */
export class ExplorerBadResponseError extends ExplorerError {
  override name = "ExplorerBadResponseError";
  /** The first characters of the body, for the log line. */
  readonly excerpt: string;
  /**
   * The body is not JSON at all (empty, cut short): a transport accident worth a retry.
   * JSON of the wrong shape is the API changing under us: retrying only spends credits.
   */
  readonly transient: boolean;
  constructor(operation: string, problem: string, excerpt: string, options: { transient: boolean; cause?: unknown; code?: string }) {
    super(options.code ?? "KW_EXPLORER_BAD_RESPONSE", `${operation}: unexpected response: ${problem}`, { operation, cause: options.cause, details: `body starts with: ${excerpt}` });
    this.excerpt = excerpt;
    this.transient = options.transient;
  }
}

/**
 * A field kaiawatch reads is missing or malformed in a 2xx answer: the explorer changed
 * shape under us. The window fails (its cursor stays) and `explorer_shape_changed` fires.
 */
export class ExplorerShapeError extends ExplorerBadResponseError {
  override name = "ExplorerShapeError";
  /** e.g. "results[].amount": the field, without record positions. */
  readonly field: string;
  /** A few characters of the offending value (redacted). */
  readonly sample: string;
  constructor(operation: string, where: { field: string; at: string; problem: string; sample: string }, excerpt: string) {
    super(operation, `${where.at}: ${where.problem} (the explorer's answer changed shape at ${where.field}; value ${where.sample})`, excerpt, { transient: false, code: "KW_EXPLORER_SHAPE_CHANGED" });
    this.field = where.field;
    this.sample = where.sample;
  }
}

/** The answer was larger than maxResponseBytes; reading stopped there. */
export class ExplorerResponseTooLargeError extends ExplorerError {
  override name = "ExplorerResponseTooLargeError";
  readonly limit: number;
  /** The HTTP status of the oversized answer. */
  readonly status: number;
  constructor(operation: string, limit: number, status: number) {
    super("KW_EXPLORER_RESPONSE_TOO_LARGE", `${operation}: response larger than ${limit} bytes (HTTP ${status})`, { operation });
    this.limit = limit;
    this.status = status;
  }
}

/** A call's input is invalid; nothing was sent. */
export class ExplorerInvalidParameterError extends ExplorerError {
  override name = "ExplorerInvalidParameterError";
  readonly parameter: string;
  constructor(operation: string, parameter: string, problem: string) {
    super("KW_EXPLORER_INVALID_PARAMETER", `${operation}: invalid parameter ${parameter}: ${problem}`, { operation });
    this.parameter = parameter;
  }
}

/** The call would spend more than what is left of the daily credit budget; nothing was sent. */
export class ExplorerBudgetExhaustedError extends ExplorerError {
  override name = "ExplorerBudgetExhaustedError";
  readonly cost: number;
  readonly remaining: number;
  constructor(operation: string, cost: number, remaining: number, budget: number) {
    super("KW_EXPLORER_BUDGET_EXHAUSTED", `${operation}: daily credit budget exhausted (costs ${cost}, ${remaining} of ${budget} left today, UTC)`, { operation });
    this.cost = cost;
    this.remaining = remaining;
  }
}

/**
 * A failure of the shared transport (src/http) as the explorer's own error, under the code it
 * has always had: a log line, a status answer and a user's search then name the explorer.
 * Anything else passes as it is.
 */
export function explorerErrorOf(error: unknown): unknown {
  if (error instanceof HttpNetworkError) return new ExplorerNetworkError(error.request, error.cause);
  if (error instanceof HttpTimeoutError) return new ExplorerTimeoutError(error.request, error.phase, error.cause);
  if (error instanceof HttpDeadlineError) return new ExplorerDeadlineError(error.request, error.deadlineMs);
  if (error instanceof HttpResponseTooLargeError) return new ExplorerResponseTooLargeError(error.request, error.limit, error.status);
  return error;
}

/** The explorer's Retry-After on an error, for the retry loop. */
export function retryAfterOf(error: unknown): number | undefined {
  return error instanceof ExplorerHttpError ? error.retryAfterMs : undefined;
}

/**
 * The one place that decides whether a failed request is worth another attempt, from the
 * error's type: network failures, timeouts, missed deadlines and the transient statuses. Other 4xx (bad
 * input, auth, not found) would fail the same way again, and an abort is a request to stop.
 */
export function shouldRetry(error: unknown): boolean {
  if (error instanceof ExplorerNetworkError || error instanceof ExplorerTimeoutError || error instanceof ExplorerDeadlineError) return true;
  if (error instanceof ExplorerPlanError) return false;
  if (error instanceof ExplorerHttpError) return RETRYABLE_STATUSES.has(error.status);
  if (error instanceof ExplorerBadResponseError) return error.transient;
  return false;
}
