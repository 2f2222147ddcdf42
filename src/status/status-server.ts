import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import type { DeadLetterSelector, RequeueResult } from "../notify/dispatcher.js";
import { createHostCheck, isLoopbackHost } from "./allowed-hosts.js";
import { bearerTokenMatches } from "./bearer.js";
import { StatusError } from "./errors.js";
import { PAGE_FILES, PAGE_SECURITY_HEADERS } from "./page/page-files.js";
import { parseRequeueBody } from "./requeue-body.js";

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
  /** Sends dead letters again; offered at POST /api/dead-letters/requeue only when a token is configured. */
  requeueDeadLetters?(selector: DeadLetterSelector): Promise<RequeueResult>;
  /** Stops what the provider runs in the background; called when the server closes. */
  close?(): void;
}

export interface StatusServerOptions {
  listen: { host: string; port: number };
  /**
   * When set, /metrics and /status need `Authorization: Bearer <token>`, and dead letters can
   * be re-queued (POST /api/dead-letters/requeue, with the token). Without it the server is read-only.
   */
  token?: string;
  /** Host names (besides loopback names, IP addresses and the listen host) that requests may be addressed to. */
  allowedHosts?: readonly string[];
  provider: StatusProvider;
}

export interface StatusServer {
  /** e.g. http://127.0.0.1:9464 (the real port when 0 was asked for). */
  readonly url: string;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

interface Route {
  methods: readonly string[];
  auth: boolean;
  handler: Handler;
}

const READ = ["GET", "HEAD"] as const;

/**
 * The operator's window into a running daemon, on node:http: `/` (the status page, which
 * reads /status), `/healthz` (the process serves), `/readyz` (store writable, recent ticks,
 * head reachable), `/metrics` (Prometheus) and `/status` (the same as JSON). Loopback by
 * default. The optional bearer token guards what reveals the setup (/metrics, /status); the
 * probes stay open so that an orchestrator needs no secret. Read-only unless that token is
 * configured: only then can dead letters be re-queued, by a request that carries it.
 */
export async function createStatusServer(common: Common, options: StatusServerOptions): Promise<StatusServer> {
  const { provider } = options;
  const logger = common.logger.child({ component: "status" });
  const registry = common.metrics.registry;
  common.secrets.add(options.token);
  // Error texts inside (a sink's last error, a failed head read) pass the same scrubbing as log lines.
  const sendJson = (res: ServerResponse, status: number, value: unknown) =>
    send(res, status, "application/json; charset=utf-8", common.secrets.redact(`${JSON.stringify(value, null, 2)}\n`));

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
  // The page and its two files hold no data (it reads /status like any client), so they need no token.
  for (const [path, file] of Object.entries(PAGE_FILES)) {
    routes[path] = { methods: READ, auth: false, handler: (_req, res) => send(res, 200, file.contentType, file.body) };
  }
  if (canRequeue) {
    const requeue = provider.requeueDeadLetters!.bind(provider);
    routes["/api/dead-letters/requeue"] = {
      methods: ["POST"],
      auth: true,
      handler: async (req, res) => {
        const parsed = await parseRequeueBody(req);
        if (!parsed.ok) return sendJson(res, parsed.status, { error: parsed.error });
        const result = await requeue(parsed.selector);
        logger.info({ requeued: result.requeued, unmatched: result.unmatched.length, all: "all" in parsed.selector }, "dead letters re-queued from the status server");
        sendJson(res, 200, result);
      },
    };
  }

  const hostAllowed = createHostCheck(options.listen.host, options.allowedHosts);
  const server = createServer((req, res) => {
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
    if (route.auth && options.token !== undefined && !bearerTokenMatches(req.headers.authorization, options.token)) {
      res.setHeader("www-authenticate", 'Bearer realm="kaiawatch"');
      return sendJson(res, 401, { error: "this endpoint needs Authorization: Bearer <status.token>" });
    }
    Promise.resolve(route.handler(req, res)).catch((error: unknown) => {
      logger.error({ path, err: describeError(error) }, "status endpoint failed");
      if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      else res.destroy();
    });
  });
  // A scraper that keeps its connection open must not hold close() up.
  server.keepAliveTimeout = 5_000;

  const { host, port } = options.listen;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      provider.close?.();
      reject(listenError(error, host, port));
    };
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.on("error", (error) => logger.error({ err: describeError(error) }, "status server error"));
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info({ url, auth: options.token !== undefined, requeue: canRequeue }, "status server listening (the status page at /; /healthz /readyz /metrics /status)");
  if (options.token === undefined && !isLoopbackHost(host)) {
    logger.warn({ url }, "the status server listens beyond this machine without status.token: anyone who reaches it can read /status and /metrics (the sources, rules, sinks and recent alerts); set status.token");
  }

  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        provider.close?.();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    ...PAGE_SECURITY_HEADERS,
  });
  res.end(res.req.method === "HEAD" ? undefined : body);
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): StatusError {
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
