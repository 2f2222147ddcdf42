import type { IncomingMessage, ServerResponse } from "node:http";
import { API_LIMITS, OPERATIONS } from "../explorer/operations.js";
import { ApiError, SERVER_ERRORS, answer, camelCaseKeys, matchRoute, type ApiContext, type Dialect } from "./api.js";
import type { Chain } from "./chain.js";
import type { Meter } from "./meter.js";
import type { NftState } from "./nft-state.js";
import type { createPollLog } from "./poll-log.js";
import { createPrng } from "./prng.js";
import type { Responder } from "./respond.js";
import { answerSitePage } from "./site-page.js";
import type { LiveSettings, SimulatorFaults, SimulatorLimits } from "./simulator.js";
import type { World } from "./world.js";

export interface ApiHandlerDeps {
  seed: number;
  world: World;
  chain: Chain;
  nft: NftState;
  dialect: Dialect;
  /** Changed in place by `setFaults`: read at each request. */
  limits: SimulatorLimits;
  live: LiveSettings;
  meter: Meter;
  pollLog: ReturnType<typeof createPollLog>;
  respond: Responder;
  sleep: (ms: number) => Promise<void>;
}

/** The records the explorer never indexed, as a test of a chain record (SimulatorFaults.missingRecords). */
function missingOf(records: SimulatorFaults["missingRecords"]): ApiContext["missing"] {
  if (records === undefined || records.length === 0) return undefined;
  const wanted = records.map((r) => ({ hash: r.transactionHash.toLowerCase(), logIndex: r.logIndex, callId: r.callId }));
  return (record) => wanted.some((w) => w.hash === record.tx.hash.toLowerCase() && (w.logIndex === undefined || w.logIndex === record.logIndex) && (w.callId === undefined || w.callId === record.callId));
}

function isNonEmptyList(body: unknown): body is { results: unknown[] } {
  const results = (body as { results?: unknown } | null)?.results;
  return Array.isArray(results) && results.length > 0;
}

/**
 * The explorer API side of the simulator: the faults and limits a request meets, in the order
 * the real service applies them, then the answer (maybe cut short, emptied of a field or garbled).
 */
export function createApiHandler({ seed, world, chain, nft, dialect, limits, live, meter, pollLog, respond, sleep }: ApiHandlerDeps): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  const { send, sendError } = respond;
  // Faults come from their own stream, drawn the same way for every request, so that
  // changing one rate does not reshuffle the others.
  const faultPrng = createPrng(seed, 0xfa17);
  // Short pages draw from a stream of their own: adding them left the other faults' draws as they were.
  const shortPagePrng = createPrng(seed, 0x5407);
  // So does the latency jitter.
  const latencyPrng = createPrng(seed, 0x1a7e);

  return async function handleApi(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const site = req.method === "GET" ? /^\/(tx|block)\/([^/]+)$/.exec(url.pathname) : null;
    if (site) return answerSitePage(res, meter, seed, chain.head, site[1] as "tx" | "block", site[2]!);
    const draws = [faultPrng.next(), faultPrng.next(), faultPrng.next(), faultPrng.next(), faultPrng.next()] as [number, number, number, number, number];
    const shortDraw = shortPagePrng.next();
    const latencyDraw = latencyPrng.next();
    const route = matchRoute(url.pathname);
    const op = route && req.method === "GET" ? route.op : "unknown";
    const poll = pollLog.note(req, route, url, op, (done) => res.on("finish", () => done(String(res.statusCode))));
    const fault = (name: string) => {
      meter.fault(name);
      poll.fault ??= name;
    };
    const f = live.faults;
    const latency = (f.latencyMs ?? 0) + latencyDraw * (f.latencyJitterMs ?? 0);
    if (latency > 0) {
      meter.fault("latency");
      await sleep(latency);
      if (live.closing) return void req.socket.destroy();
    }
    if (draws[0] < (f.resetRate ?? 0)) {
      fault("reset");
      meter.request(op, "reset");
      req.socket.destroy();
      return;
    }
    if (draws[1] < (f.serverErrorRate ?? 0)) {
      fault("serverError");
      const status = ([500, 502, 503] as const)[Math.floor(draws[4] * 3)] ?? 500;
      // A gateway in front of the service answers 502 in HTML, not in the API's JSON.
      if (status === 502) return send(res, op, 502, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>", { "content-type": "text/html" });
      if (status === 503) return sendError(res, op, SERVER_ERRORS.unavailable());
      return sendError(res, op, SERVER_ERRORS.internal());
    }
    if (f.maintenance) {
      fault("maintenance");
      return sendError(res, op, SERVER_ERRORS.maintenance());
    }
    const authorized = limits.apiKey === undefined || req.headers.authorization === `Bearer ${limits.apiKey}`;
    const refused = () => (f.unauthorizedQuotesToken ? SERVER_ERRORS.invalidToken(req.headers.authorization ?? "") : SERVER_ERRORS.unauthorized());
    // The predecessor's /api/v1/app-users/request-quotas: the key's allowances, not itself rate limited or charged.
    if (url.pathname === "/api/v1/app-users/request-quotas" && req.method === "GET") {
      if (!authorized) return sendError(res, op, refused());
      const quotas: Record<string, number> = {};
      if (limits.requestsPerSecond !== undefined) quotas.request_per_second = limits.requestsPerSecond;
      if (limits.dailyCreditQuota !== undefined) quotas.request_per_day = limits.dailyCreditQuota;
      return send(res, "requestQuotas", 200, JSON.stringify(quotas));
    }
    if (!route || req.method !== "GET") return sendError(res, op, SERVER_ERRORS.notFoundUrl(url.pathname));
    if (!authorized) {
      fault("unauthorized");
      return sendError(res, op, refused());
    }
    if (limits.plan === "FREE" && OPERATIONS[route.op].plan !== "FREE") {
      fault("plan");
      return sendError(res, op, SERVER_ERRORS.forbidden());
    }
    // Neither quota answer carries a Retry-After (klaytn/finder-api OpenApiRequestRateLimiter).
    if (meter.rateRetryAfter(limits.requestsPerSecond) !== undefined) {
      fault("rateLimit");
      return sendError(res, op, SERVER_ERRORS.quota("requestPerSecond", limits.requestsPerSecond as number));
    }
    const cost = OPERATIONS[route.op].cost;
    if (meter.quotaRetryAfter(limits.dailyCreditQuota, cost) !== undefined) {
      fault("quota");
      return sendError(res, op, SERVER_ERRORS.quota("requestPerDay", limits.dailyCreditQuota as number));
    }
    let body: unknown;
    try {
      body = answer({ world, chain, nft, visibleHead: chain.head - Math.max(0, limits.indexingLagBlocks ?? 0), dialect, countCap: limits.countCap ?? API_LIMITS.maxTotalCount, missing: missingOf(f.missingRecords) }, route, url.searchParams);
    } catch (error) {
      if (error instanceof ApiError) return sendError(res, op, error);
      throw error;
    }
    meter.charge(route.op, cost);
    if (isNonEmptyList(body) && ((live.faults.shortPages ?? 0) > 0 || shortDraw < (f.shortPageRate ?? 0))) {
      fault("shortPage");
      if ((live.faults.shortPages ?? 0) > 0) live.faults = { ...live.faults, shortPages: (live.faults.shortPages as number) - 1 };
      // The count stays: it is what the explorer says it has, not what it sent.
      body.results.pop();
    }
    if (f.dropField !== undefined && isNonEmptyList(body)) {
      fault("dropField");
      for (const record of body.results as Record<string, unknown>[]) delete record[f.dropField];
    }
    let text = JSON.stringify(dialect.spelling === "camelCase" ? camelCaseKeys(body) : body);
    // The document types amounts as numbers: written bare, exact (the server writes them as strings).
    if (dialect.name === "document") text = text.replace(/"amount":"(-?\d+(?:\.\d+)?)"/g, '"amount":$1');
    if (draws[2] < (f.truncateRate ?? 0)) {
      fault("truncate");
      text = text.slice(0, Math.max(1, Math.floor(text.length * (0.2 + 0.6 * draws[4]))));
    } else if (draws[3] < (f.malformedRate ?? 0)) {
      fault("malformed");
      text = draws[4] < 0.5 ? "<html><body><h1>Service temporarily degraded</h1></body></html>" : '{"results":"unavailable","paging":{"total_count":"many"}}';
    }
    send(res, op, 200, text);
  };
}
