import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import { bearerTokenMatches } from "./bearer.js";
import { StatusError } from "./errors.js";

/** Why the daemon is or is not ready: each check with its verdict. */
export interface Readiness {
  ready: boolean;
  /** One line per failed check; empty when ready. */
  reasons: string[];
  checks: Record<string, { ok: boolean; detail: string }>;
}

/** What the status server shows; the daemon supplies it (src/status/daemon-status.ts). */
export interface StatusProvider {
  readiness(): Readiness;
  /** The JSON of `/status`. */
  status(): Promise<unknown>;
  /** Brings gauges that are read rather than pushed (cursors, store size) up to date before a scrape. */
  refreshMetrics?(): void;
}

export interface StatusServerOptions {
  listen: { host: string; port: number };
  /** When set, /metrics and /status need `Authorization: Bearer <token>`. */
  token?: string;
  provider: StatusProvider;
}

export interface StatusServer {
  /** e.g. http://127.0.0.1:9464 (the real port when 0 was asked for). */
  readonly url: string;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/**
 * The operator's window into a running daemon, on node:http: `/healthz` (the process
 * serves), `/readyz` (store writable, recent ticks, head reachable), `/metrics`
 * (Prometheus) and `/status` (the same as JSON). Read-only; loopback by default. The
 * optional bearer token guards what reveals the setup (/metrics, /status); the probes stay
 * open so that an orchestrator needs no secret.
 */
export async function createStatusServer(common: Common, options: StatusServerOptions): Promise<StatusServer> {
  const { provider } = options;
  const logger = common.logger.child({ component: "status" });
  const registry = common.metrics.registry;
  common.secrets.add(options.token);
  // Error texts inside (a sink's last error, a failed head read) pass the same scrubbing as log lines.
  const sendJson = (res: ServerResponse, status: number, value: unknown) =>
    send(res, status, "application/json; charset=utf-8", common.secrets.redact(`${JSON.stringify(value, null, 2)}\n`));

  const routes: Record<string, { auth: boolean; handler: Handler }> = {
    "/healthz": { auth: false, handler: (_req, res) => send(res, 200, "text/plain; charset=utf-8", "ok\n") },
    "/readyz": {
      auth: false,
      handler: (_req, res) => {
        const readiness = provider.readiness();
        sendJson(res, readiness.ready ? 200 : 503, readiness);
      },
    },
    "/metrics": {
      auth: true,
      handler: async (_req, res) => {
        provider.refreshMetrics?.();
        send(res, 200, registry.contentType, await registry.metrics());
      },
    },
    "/status": { auth: true, handler: async (_req, res) => sendJson(res, 200, await provider.status()) },
  };

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://status.invalid").pathname;
    const route = routes[path];
    if (!route) return sendJson(res, 404, { error: "not found", endpoints: Object.keys(routes) });
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
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
    const onError = (error: NodeJS.ErrnoException) => reject(listenError(error, host, port));
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.on("error", (error) => logger.error({ err: describeError(error) }, "status server error"));
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info({ url, auth: options.token !== undefined }, "status server listening (/healthz /readyz /metrics /status)");

  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
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
    "x-content-type-options": "nosniff",
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
