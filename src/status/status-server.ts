import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Common } from "../common/common.js";
import { describeError, errorCode } from "../common/errors.js";
import type { DeadLetterSelector, RequeueResult } from "../notify/dead-letters.js";
import { createHostCheck, isLoopbackHost } from "./allowed-hosts.js";
import { bearerTokenMatches } from "./bearer.js";
import type { AlertToQueue } from "./alerts-body.js";
import type { CursorMove } from "./cursor-body.js";
import { StatusError } from "./errors.js";
import { PAGE_FILES, PAGE_SECURITY_HEADERS } from "./page/page-files.js";
import type { SilenceChange } from "./silence-body.js";
import type { Silence } from "../notify/silences.js";
import { checkWriteAccess } from "./write-access.js";
import { writeRoutes } from "./write-routes.js";
import { createStallBeacon, type StallBeacon } from "../common/stall-beacon.js";
import { openFrontDoor, type FrontDoor } from "./front-door.js";
import { parseHistoryQuery } from "./history-query.js";
import type { AttemptFilter, DeliveryAttempt } from "../store/types.js";

/** Why the daemon is or is not ready: each check with its verdict. */
export interface Readiness {
  ready: boolean;
  /** One line per failed check; empty when ready. */
  reasons: string[];
  checks: Record<string, { ok: boolean; detail: string }>;
}

/** What the status server shows; the daemon supplies it (src/status/daemon-status.ts). */
export interface StatusProvider {
  readiness(): Promise<Readiness>;
  /** The JSON of `/status`. */
  status(): Promise<unknown>;
  /** Brings gauges that are read rather than pushed (cursors, store size) up to date before a scrape. */
  refreshMetrics?(): Promise<void>;
  /** Sends dead letters again (POST /api/dead-letters/requeue). */
  requeueDeadLetters?(selector: DeadLetterSelector): Promise<RequeueResult>;
  /** Moves source cursors while the daemon runs (POST /api/cursors); rejects an unknown source as a whole. */
  moveCursors?(moves: readonly CursorMove[]): Promise<CursorMoveResult>;
  /** Queues alerts a command found (`replay --send`) for delivery (POST /api/alerts); rejects unknown sinks as a whole. */
  queueAlerts?(alerts: readonly AlertToQueue[]): Promise<{ ok: true; queued: number; already_queued: number } | { ok: false; error: string }>;
  /** Adds or removes a silence while the daemon runs (POST /api/silences): `kaiawatch silence add/remove`. */
  changeSilences?(change: SilenceChange): Promise<{ ok: true; silence: Silence } | { ok: false; status: 400 | 404; error: string }>;
  /** The delivery history, newest first (GET /api/history, a read behind the same token as /status). */
  history?(filter: AttemptFilter): Promise<DeliveryAttempt[]>;
  /** Stops what the provider runs in the background; called when the server closes. */
  close?(): void;
}

export type CursorMoveResult =
  | { ok: true; moved: Array<{ source: string; watch: string; from: number | null; to: number }> }
  | { ok: false; error: string };

export interface StatusServerOptions {
  listen: { host: string; port: number };
  /**
   * When set, /metrics and /status need `Authorization: Bearer <token>`, and so do the
   * writes (POST /api/…).
   */
  token?: string;
  /**
   * Without `token`: the token the writes need (the generated one of `status.write_token_file`).
   * With neither, writes are refused unless `trustLoopback` lets loopback peers in (write-access.ts).
   */
  writeToken?: string;
  /** `status.trust_loopback`: loopback peers write without a token. Default false. */
  trustLoopback?: boolean;
  /** Host names (besides loopback names, IP addresses and the listen host) that requests may be addressed to. */
  allowedHosts?: readonly string[];
  provider: StatusProvider;
  /** STATUS_SERVER_LIMITS unless given (tests shorten them). */
  limits?: Partial<StatusServerLimits>;
  /**
   * The main thread's beacon, which the store stamps around each write (the daemon's); one of
   * the server's own otherwise, which stamps only the turns.
   */
  beacon?: StallBeacon;
  /** `status.frozen_after`: a main thread held this long makes /healthz and /readyz answer 503 (FROZEN_AFTER_MS). */
  frozenAfterMs?: number;
}

/** status.frozen_after's default: far above a slow disk's fsync (seconds), well under a liveness probe's patience. */
export const FROZEN_AFTER_MS = 30_000;

/**
 * What one client may hold of the status server. Without them a slow-loris client held a
 * connection 80 s (node's 60 s headers timeout, checked every 30 s) or 300 s (its request
 * timeout), and connections were unbounded, so a few scripts could keep /healthz and
 * /readyz from answering the orchestrator. The probes answer in milliseconds; a cursor
 * move waits for a tick, but only after its request has arrived, which these do not bound.
 */
export interface StatusServerLimits {
  /** Open connections at once; node closes further ones at once. */
  maxConnections: number;
  /** From connecting to the end of the request's headers. */
  headersTimeoutMs: number;
  /** From connecting to the end of the request's body. */
  requestTimeoutMs: number;
  /** After an answer is written: how long the client may take to read it, or stay idle before its next request. */
  idleTimeoutMs: number;
}

export const STATUS_SERVER_LIMITS: StatusServerLimits = { maxConnections: 64, headersTimeoutMs: 5_000, requestTimeoutMs: 10_000, idleTimeoutMs: 5_000 };

export interface StatusServer {
  /** e.g. http://127.0.0.1:9464 (the real port when 0 was asked for). */
  readonly url: string;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

export interface Route {
  methods: readonly string[];
  auth: boolean;
  /** A write: allowed by checkWriteAccess (the token, or a loopback peer without one) and logged. */
  write?: boolean;
  handler: Handler;
}

const READ = ["GET", "HEAD"] as const;

/**
 * The operator's window into a running daemon, on node:http: `/` (the status page, which
 * reads /status), `/healthz` (the process serves), `/readyz` (store writable, recent ticks,
 * head reachable), `/metrics` (Prometheus) and `/status` (the same as JSON). Loopback by
 * default. The optional bearer token guards what reveals the setup (/metrics, /status); the
 * probes stay open so that an orchestrator needs no secret. The write API (re-queue dead
 * letters, move cursors) is what `kaiawatch outbox retry` and `cursors --set` use while the
 * daemon holds the store's lock, like amtool against a running Alertmanager: always with a
 * token (status.token, or the generated one the commands read from its file), unless
 * status.trust_loopback lets this machine's processes in without. Every write is logged at info.
 */
export async function createStatusServer(common: Common, options: StatusServerOptions): Promise<StatusServer> {
  const { provider } = options;
  const logger = common.logger.child({ component: "status" });
  const registry = common.metrics.registry;
  common.secrets.add(options.token);
  common.secrets.add(options.writeToken);
  const writeAuth = { token: options.token ?? options.writeToken, trustLoopback: options.trustLoopback ?? false };
  // Error texts inside (a sink's last error, a failed head read) pass the same scrubbing as log lines.
  const sendJson = (res: ServerResponse, status: number, value: unknown) =>
    send(res, status, "application/json; charset=utf-8", common.secrets.redact(`${JSON.stringify(value, null, 2)}\n`));

  // The page offers its re-queue buttons only with a token: a browser is the one client that
  // other web pages can steer, so it does not get the loopback allowance the CLI has.
  const canRequeue = options.token !== undefined && provider.requeueDeadLetters !== undefined;

  const routes: Record<string, Route> = {
    "/healthz": { methods: READ, auth: false, handler: (_req, res) => send(res, 200, "text/plain; charset=utf-8", "ok\n") },
    "/readyz": {
      methods: READ,
      auth: false,
      handler: async (_req, res) => {
        const readiness = await provider.readiness();
        sendJson(res, readiness.ready ? 200 : 503, readiness);
      },
    },
    "/metrics": {
      methods: READ,
      auth: true,
      handler: async (_req, res) => {
        await provider.refreshMetrics?.();
        send(res, 200, registry.contentType, await registry.metrics());
      },
    },
    "/status": {
      methods: READ,
      auth: true,
      handler: async (_req, res) => {
        const body = await provider.status();
        // The page shows the re-queue buttons only when the server would accept them.
        const actions = { requeue_dead_letters: canRequeue };
        sendJson(res, 200, body !== null && typeof body === "object" && !Array.isArray(body) ? { ...body, actions } : body);
      },
    },
  };
  if (provider.history !== undefined) {
    const history = provider.history.bind(provider);
    routes["/api/history"] = {
      methods: READ,
      auth: true,
      handler: async (req, res) => {
        const parsed = parseHistoryQuery(new URL(req.url ?? "/", "http://status.invalid").searchParams);
        if (!parsed.ok) return sendJson(res, 400, { error: parsed.error });
        sendJson(res, 200, { attempts: await history(parsed.filter) });
      },
    };
  }
  // The page and its two files hold no data (it reads /status like any client), so they need no token.
  for (const [path, file] of Object.entries(PAGE_FILES)) {
    routes[path] = { methods: READ, auth: false, handler: (_req, res) => send(res, 200, file.contentType, file.body) };
  }
  Object.assign(routes, writeRoutes(provider, { logger, sendJson, writer }));

  const hostAllowed = createHostCheck(options.listen.host, options.allowedHosts);
  const limits = { ...STATUS_SERVER_LIMITS, ...options.limits };
  const serverOptions = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // node checks both timeouts only this often (30 s by default): a bound of 5 s became 35.
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
    // A scraper that keeps its connection open must not hold close() up.
    keepAliveTimeout: limits.idleTimeoutMs,
  };
  const server = createServer(serverOptions, (req, res) => {
    // A request being handled may wait (a cursor move waits for a tick): only the time after an answer is bounded (send()).
    req.socket.setTimeout(0);
    // Before anything else, probes included: /readyz carries error texts too.
    if (!hostAllowed(req.headers.host)) {
      return sendJson(res, 421, { error: "this server does not answer to that host name; add it to status.allowed_hosts" });
    }
    const path = new URL(req.url ?? "/", "http://status.invalid").pathname;
    const route = routes[path];
    if (!route) return sendJson(res, 404, { error: "not found", endpoints: Object.keys(routes) });
    if (!route.methods.includes(req.method ?? "")) {
      res.setHeader("allow", route.methods.join(", "));
      return sendJson(res, 405, { error: "method not allowed" });
    }
    if (route.write) {
      const verdict = checkWriteAccess(req, writeAuth);
      if (!verdict.ok) {
        logger.warn({ path, peer: req.socket.remoteAddress, status: verdict.status }, "a write to the status API was refused");
        if (verdict.status === 401) res.setHeader("www-authenticate", 'Bearer realm="kaiawatch"');
        return sendJson(res, verdict.status, { error: verdict.error });
      }
      WRITERS.set(req, verdict.by);
    } else if (route.auth && options.token !== undefined && !bearerTokenMatches(req.headers.authorization, options.token)) {
      res.setHeader("www-authenticate", 'Bearer realm="kaiawatch"');
      return sendJson(res, 401, { error: "this endpoint needs Authorization: Bearer <status.token>" });
    }
    Promise.resolve(route.handler(req, res)).catch((error: unknown) => {
      logger.error({ path, code: errorCode(error), err: describeError(error) }, "status endpoint failed");
      if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      else res.destroy();
    });
  });
  // (maxConnections is the front door's: it holds the listening socket.)
  server.on("connection", (socket: Socket) => IDLE_TIMEOUTS.set(socket, limits.idleTimeoutMs));

  const { host, port } = options.listen;
  // The listening socket is held by a thread of its own, which answers /healthz and /readyz
  // with 503 when the main thread is held (a store write on a frozen disk) and relays every
  // connection to `server` otherwise (front-door.ts).
  const beacon = options.beacon ?? createStallBeacon();
  const stopTurns = beacon.startTurns();
  let frontDoor: FrontDoor;
  try {
    frontDoor = await openFrontDoor({
      server,
      host,
      port,
      maxConnections: limits.maxConnections,
      requestTimeoutMs: limits.requestTimeoutMs,
      beacon: beacon.buffer,
      frozenAfterMs: options.frozenAfterMs ?? FROZEN_AFTER_MS,
      headers: PAGE_SECURITY_HEADERS,
      logger,
    });
  } catch (error) {
    stopTurns();
    provider.close?.();
    throw listenError(error as { code?: string; message: string }, host, port);
  }
  server.on("error", (error) => logger.error({ code: errorCode(error, "KW_STATUS_SERVER"), err: describeError(error) }, "status server error"));
  const address = frontDoor.address;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  const writes = options.token !== undefined ? "with status.token" : options.writeToken !== undefined ? "with the token of status.write_token_file" : "none";
  logger.info({ url, auth: options.token !== undefined, writes: writeAuth.trustLoopback ? `from loopback without a token, else ${writes}` : writes }, "status server listening (the status page at /; /healthz /readyz /metrics /status)");
  if (options.token === undefined && !isLoopbackHost(host)) {
    logger.warn({ url }, "the status server listens beyond this machine without status.token: anyone who reaches it can read /status and /metrics (the sources, rules, sinks and recent alerts); set status.token");
  }

  return {
    url,
    close: async () => {
      provider.close?.();
      stopTurns();
      server.closeAllConnections();
      await frontDoor.close();
      // The server never listened (the thread did): its close ends its timers, and its callback's error says so.
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Who wrote, for the log line every write leaves: what checkWriteAccess let in, noted on the request. */
function writer(req: IncomingMessage): { peer: string | undefined; by: "token" | "loopback" } {
  return { peer: req.socket.remoteAddress, by: WRITERS.get(req) ?? "token" };
}

const WRITERS = new WeakMap<IncomingMessage, "token" | "loopback">();

/** Each connection's idle bound, for send(), which sees only the response. */
const IDLE_TIMEOUTS = new WeakMap<Socket, number>();

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  // A client that does not read its answer (or sends nothing more) is cut after idleTimeoutMs.
  const idle = IDLE_TIMEOUTS.get(res.req.socket);
  // (node's own timeout handler destroys a socket whose request and response have no 'timeout' listener)
  if (idle !== undefined) res.req.socket.setTimeout(idle);
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    ...PAGE_SECURITY_HEADERS,
  });
  res.end(res.req.method === "HEAD" ? undefined : body);
}

function listenError(error: { code?: string; message: string }, host: string, port: number): StatusError {
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const why =
    error.code === "EADDRINUSE"
      ? "the port is already in use (another kaiawatch, or another program; change status.listen or set it to false)"
      : error.code === "EACCES"
        ? "permission denied (ports below 1024 need privileges)"
        : error.code === "EADDRNOTAVAIL"
          ? "this machine has no such address"
          : error.message;
  return new StatusError("KW_STATUS_LISTEN", `the status server cannot listen on ${where} (status.listen): ${why}`, { cause: error });
}
