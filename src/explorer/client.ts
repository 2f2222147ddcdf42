import type { Dispatcher } from "undici";
import type { Common } from "../common/common.js";
import { describeError, isAbortError } from "../common/errors.js";
import { createCreditMeter, type CreditMeter } from "./credit-meter.js";
import { unknownFields } from "./drift.js";
import { ExplorerBadResponseError, ExplorerError, ExplorerHttpError, ExplorerKeyRefusedError, ExplorerPlanError, ExplorerResponseTooLargeError, ExplorerShapeError, explorerErrorOf, quotaOf, retryAfterOf, shouldRetry } from "./errors.js";
import { ExactNumberError, JsonTooDeepError, readExactJson, type ExactJson } from "./exact-json.js";
import { noteAnswerBounds } from "./answer-bounds.js";
import { createPool } from "../http/pool.js";
import { excerptOf, sendRequest, type HttpResponse } from "../http/request.js";
import { httpErrorOptionsOf } from "./http-error.js";
import { OPERATIONS, type OperationName } from "./operations.js";
import { buildRequestPath, type OperationParams } from "./params.js";
import { createRateLimiter, type RateLimiter } from "../http/rate-limiter.js";
import { RESPONSE_CHECKERS, ShapeError, type OperationResults } from "./response-checkers.js";
import { spellingOf, toSnakeCase, type FieldSpelling } from "./spelling.js";
import { callerSignals } from "./caller-signals.js";
import { paginatorOf } from "./paginator.js";
import { withRetries } from "../http/retry.js";
import { USER_AGENT } from "../http/user-agent.js";

export type { OperationParams } from "./params.js";
export type { OperationResults } from "./response-checkers.js";

export interface ExplorerClientOptions {
  /** e.g. https://mainnet-oapi.kaiascan.io (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; never logged. */
  apiKey?: string;
  /** Shared by every call of the client. Default 5. */
  requestsPerSecond?: number;
  /** A limiter to use instead of one made from requestsPerSecond (tests: one on a fake clock). */
  rateLimiter?: RateLimiter;
  /** Credits per UTC day; calls that would exceed it fail before sending. Unlimited by default. */
  dailyCreditBudget?: number;
  /** Default 5. */
  maxRetries?: number;
  /** Default 500. */
  retryBaseMs?: number;
  /** Longest wait between attempts, and the longest Retry-After honoured. Default 30,000. */
  retryMaxMs?: number;
  /**
   * The transport to send through (a Pool, an Agent, or one composed with interceptors);
   * the client then leaves closing it to the caller, and the three timeouts below are its own.
   * A keep-alive pool of its own to the base URL's origin when absent.
   */
  dispatcher?: Dispatcher;
  /** Default 10,000. */
  connectTimeoutMs?: number;
  /** Default 30,000. */
  headersTimeoutMs?: number;
  /** Longest silence between body bytes. Default 30,000. */
  bodyTimeoutMs?: number;
  /** Longest a whole request may take, connect to last byte; ExplorerDeadlineError (retried) past it. Default 60,000. */
  requestDeadlineMs?: number;
  /** Default 32 MiB. */
  maxResponseBytes?: number;
  /** Default kaiawatch/<version>. */
  userAgent?: string;
  /** Sent as `x-kaiawatch-replica` when replicas share a store, so a test's simulator can tell who polled what. */
  replicaId?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/** The operations that answer with a paged list. */
export type ListOperationName = { [K in OperationName]: (typeof OPERATIONS)[K]["list"] extends true ? K : never }[OperationName];

type OperationMethods = { [K in OperationName]: (params: OperationParams[K], options?: CallOptions) => Promise<OperationResults[K]> };

export interface ExplorerClient extends OperationMethods {
  /**
   * Every page of a list operation, from `params.page` (default 1) with `params.size`
   * (default 20). Stops after a page with `paging.last`, a short page, `current_page >=
   * total_page`, or a 400 "totalPage is over.".
   */
  paginate<K extends ListOperationName>(operation: K, params: OperationParams[K], options?: CallOptions): AsyncGenerator<OperationResults[K], void, undefined>;
  readonly meter: CreditMeter;
  /**
   * Fields outside the API document seen in answers since the start, per operation, each
   * with the number of answers that carried it (also counted in kaiawatch_explorer_unknown_fields_total).
   */
  unknownFields(): Partial<Record<OperationName, Record<string, number>>>;
  /** Answers read since the start by how their field names were spelled (also counted in kaiawatch_explorer_field_spelling_total). */
  fieldSpellings(): Record<FieldSpelling, number>;
  /** Requests per second allowed now (lowered after per-second quota refusals). */
  requestRate(): number;
  /** Waits for requests in flight, then closes the connections (of its own pool: a dispatcher handed in stays open). */
  close(): Promise<void>;
}

/** Distinct unknown field names remembered (and labelled in the metric) per operation; the rest count as "(more)". */
const MAX_DRIFT_FIELDS = 50;

/** Far more than a plan's requests per second need at the API's answer times. */
const MAX_CONNECTIONS = 16;

const DEFAULTS = {
  requestsPerSecond: 5,
  maxRetries: 5,
  retryBaseMs: 500,
  retryMaxMs: 30_000,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  requestDeadlineMs: 60_000,
  maxResponseBytes: 32 * 1024 * 1024,
};

export function createExplorerClient(common: Common, options: ExplorerClientOptions): ExplorerClient {
  const { logger, metrics } = common;
  const settings = { ...DEFAULTS, ...definedOnly(options) };
  const base = parseBaseUrl(options.baseUrl);
  common.secrets.add(options.apiKey);

  const owned = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    createPool(base.origin, {
      connectTimeoutMs: settings.connectTimeoutMs,
      headersTimeoutMs: settings.headersTimeoutMs,
      bodyTimeoutMs: settings.bodyTimeoutMs,
      // A bounded pool: further requests wait in its queue. Unbounded, a tick of 10,000 sources
      // opened 10,000 sockets, and the pool scans its connections for a free one per request.
      connections: MAX_CONNECTIONS,
    });
  const headers: Record<string, string> = {
    accept: "application/json",
    "user-agent": options.userAgent ?? USER_AGENT,
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    ...(options.replicaId !== undefined ? { "x-kaiawatch-replica": options.replicaId } : {}),
  };
  const limiter = options.rateLimiter ?? createRateLimiter(settings.requestsPerSecond);
  const meter = createCreditMeter(common, options.dailyCreditBudget === undefined ? {} : { dailyBudget: options.dailyCreditBudget });
  let closed = false;
  const drift = new Map<OperationName, Map<string, number>>();
  const spellings: Record<FieldSpelling, number> = { snake_case: 0, camelCase: 0 };
  metrics.explorerRequestRate.set(limiter.rate?.() ?? settings.requestsPerSecond);

  /** Unknown fields by operation; at most MAX_DRIFT_FIELDS names each (metric labels are server-chosen text). */
  function noteDrift(operation: OperationName, found: Set<string>): void {
    if (found.size === 0) return;
    let seen = drift.get(operation);
    if (seen === undefined) drift.set(operation, (seen = new Map()));
    for (const name of found) {
      const label = seen.has(name) || seen.size < MAX_DRIFT_FIELDS ? name : "(more)";
      seen.set(label, (seen.get(label) ?? 0) + 1);
      metrics.explorerUnknownFields.inc({ operation, field: label });
    }
  }

  function decode<K extends OperationName>(operation: K, text: string): OperationResults[K] {
    const excerpt = () => common.secrets.redact(excerptOf(text));
    let parsed: ExactJson;
    try {
      parsed = readExactJson(text);
    } catch (error) {
      // Neither a number out of range nor absurd nesting is cured by asking again.
      const exactNumber = error instanceof ExactNumberError || error instanceof JsonTooDeepError;
      const problem = text.trim() === "" ? "empty body" : exactNumber ? error.message : "not valid JSON (cut short?)";
      throw new ExplorerBadResponseError(operation, problem, excerpt(), { transient: !exactNumber, cause: error });
    }
    let checked: OperationResults[K];
    try {
      // Renamed only when the page is spelled in camelCase: snake_case answers pay a few key lookups a page.
      const list = OPERATIONS[operation].list;
      const spelling = spellingOf(operation, parsed.value, list);
      spellings[spelling]++;
      metrics.explorerFieldSpelling.inc({ operation, spelling });
      checked = RESPONSE_CHECKERS[operation](spelling === "camelCase" ? toSnakeCase(operation, parsed.value, list) : parsed.value);
    } catch (error) {
      if (!(error instanceof ShapeError)) throw error;
      metrics.explorerShapeErrors.inc({ operation, field: error.field });
      throw new ExplorerShapeError(operation, { field: error.field, at: error.where, problem: error.problem, sample: common.secrets.redact(error.sample) }, excerpt());
    }
    noteDrift(operation, unknownFields(operation, checked, OPERATIONS[operation].list));
    // Whether a record of the page can need a cut is then known once per page, not found out per record.
    const results = (checked as { results?: unknown }).results;
    if (Array.isArray(results)) noteAnswerBounds(results, parsed);
    return checked;
  }

  /**
   * The error of a non-2xx answer, after acting on what it says: a spent daily quota stops
   * requests (the meter refuses them until it is time to ask again); a per-second refusal
   * lowers the rate; a 401 is the key refused, a 403 the key's plan refusing the operation.
   */
  function answerError(operation: OperationName, response: HttpResponse): ExplorerError {
    const options = httpErrorOptionsOf(operation, response, common.now());
    if (response.status === 401) return new ExplorerKeyRefusedError(options);
    if (response.status === 403) return new ExplorerPlanError(options, OPERATIONS[operation].plan, OPERATIONS[operation].number);
    if (response.status === 429) {
      const quota = quotaOf(options.body);
      if (quota.kind === "requestPerDay") {
        return meter.quotaSpent(operation, quota.limit);
      }
      limiter.slowDown?.();
    }
    return new ExplorerHttpError(options);
  }

  const closedError = (operation: OperationName) => new ExplorerError("KW_EXPLORER_CLOSED", `${operation}: the explorer client is closed`, { operation });

  async function attempt<K extends OperationName>(operation: K, path: string, signal: AbortSignal): Promise<OperationResults[K]> {
    signal.throwIfAborted();
    // A retry that comes due after close() must not reach the closed pool (a retryable network error).
    if (closed) throw closedError(operation);
    // Reserved before waiting for the rate limiter, so concurrent calls cannot together overshoot the budget.
    const reservation = meter.reserve(operation);
    let status = "error";
    let started = 0;
    try {
      await limiter.acquire(signal);
      if (limiter.rate !== undefined) metrics.explorerRequestRate.set(limiter.rate());
      started = performance.now();
      const response = await sendRequest(dispatcher, { operation, method: "GET", origin: base.origin, path, headers, signal, maxBytes: settings.maxResponseBytes, deadlineMs: settings.requestDeadlineMs });
      status = String(response.status);
      if (response.status < 200 || response.status > 299) throw answerError(operation, response);
      // The explorer charges every 2xx answer, whether or not its body is usable.
      reservation.commit();
      return decode(operation, response.text);
    } catch (thrown) {
      const error = explorerErrorOf(thrown);
      if (error instanceof ExplorerResponseTooLargeError) {
        status = String(error.status);
        if (error.status >= 200 && error.status <= 299) reservation.commit();
      }
      if (status === "error") status = isAbortError(error) ? "aborted" : error instanceof ExplorerError ? error.code : "error";
      throw error;
    } finally {
      reservation.release();
      if (started > 0) {
        metrics.explorerRequests.inc({ operation, status });
        metrics.explorerRequestDuration.observe({ operation }, (performance.now() - started) / 1000);
      }
    }
  }

  const signalOf = callerSignals(common.signal);

  async function call<K extends OperationName>(operation: K, params: OperationParams[K], callOptions: CallOptions = {}): Promise<OperationResults[K]> {
    if (closed) throw closedError(operation);
    const path = base.prefix + buildRequestPath(operation, params);
    const signal = signalOf(callOptions.signal);
    return await withRetries((_n) => attempt(operation, path, signal), {
      maxRetries: settings.maxRetries,
      baseMs: settings.retryBaseMs,
      maxMs: settings.retryMaxMs,
      signal,
      shouldRetry,
      retryAfterOf,
      // A Retry-After is the key's, not this request's: every request of the client waits it out.
      pauseFor: (ms) => limiter.pauseFor(ms),
      onRetry(error, n, delayMs) {
        metrics.explorerRetries.inc({ operation });
        const fields = { operation, attempt: n, delay_ms: delayMs, error: describeError(error) };
        if (n === 1) logger.debug(fields, "explorer request failed; retrying");
        else logger.warn(fields, "explorer request failed again; retrying");
      },
    });
  }

  const paginate = paginatorOf(call);

  const methods = Object.fromEntries(
    (Object.keys(OPERATIONS) as OperationName[]).map((name) => [name, (params: never, callOptions?: CallOptions) => call(name, params, callOptions)]),
  ) as unknown as OperationMethods;

  return {
    ...methods,
    paginate,
    meter,
    unknownFields: () => Object.fromEntries([...drift].map(([operation, fields]) => [operation, Object.fromEntries(fields)])),
    fieldSpellings: () => ({ ...spellings }),
    requestRate: () => limiter.rate?.() ?? settings.requestsPerSecond,
    async close() {
      if (closed) return;
      closed = true;
      if (owned) await dispatcher.close();
    },
  };
}

function parseBaseUrl(baseUrl: string): { origin: string; prefix: string } {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ExplorerError("KW_EXPLORER_INVALID_OPTION", `explorer base URL is not a URL: ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ExplorerError("KW_EXPLORER_INVALID_OPTION", `explorer base URL must be http or https, not ${url.protocol}`);
  if (url.search || url.hash) throw new ExplorerError("KW_EXPLORER_INVALID_OPTION", "explorer base URL must not carry a query or fragment");
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, "") };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
