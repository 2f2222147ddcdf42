import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../common/logger.js";
import { alertsBody } from "./alerts-body.js";
import { cursorBody } from "./cursor-body.js";
import { readBody, type BodyKind } from "./json-body.js";
import { requeueBody } from "./requeue-body.js";
import { silenceBody } from "./silence-body.js";
import type { Route, StatusProvider } from "./status-server.js";

/**
 * The write API, one route for each write the provider offers: re-queue dead letters, move
 * cursors, queue alerts, add or remove silences. Each body is checked before the provider
 * sees it, and each write is logged at info with who made it.
 */
export function writeRoutes(
  provider: StatusProvider,
  tools: { logger: Logger; sendJson(res: ServerResponse, status: number, value: unknown): void; writer(req: IncomingMessage): { peer: string | undefined; by: "token" | "loopback" } },
): Record<string, Route> {
  const { logger, sendJson, writer } = tools;
  const routes: Record<string, Route> = {};
  /** A POST that writes: a body `kind` refuses is answered with why, before `act` sees it. */
  const post = <T>(path: string, kind: BodyKind<T>, act: (value: T, req: IncomingMessage, res: ServerResponse) => Promise<void>) => {
    routes[path] = {
      methods: ["POST"],
      auth: true,
      write: true,
      handler: async (req, res) => {
        const body = await readBody(req, kind);
        if (!body.ok) return sendJson(res, body.status, { error: body.error });
        await act(body.value, req, res);
      },
    };
  };

  if (provider.requeueDeadLetters !== undefined) {
    const requeue = provider.requeueDeadLetters.bind(provider);
    post("/api/dead-letters/requeue", requeueBody, async (selector, req, res) => {
      const result = await requeue(selector);
      logger.info({ ...writer(req), requeued: result.requeued, unmatched: result.unmatched.length, all: "all" in selector }, "dead letters re-queued through the status API");
      sendJson(res, 200, result);
    });
  }

  if (provider.moveCursors !== undefined) {
    const move = provider.moveCursors.bind(provider);
    post("/api/cursors", cursorBody, async (moves, req, res) => {
      const result = await move(moves);
      if (!result.ok) return sendJson(res, 400, { error: result.error });
      for (const m of result.moved) logger.info({ ...writer(req), source: m.source, watch: m.watch, from: m.from, to: m.to }, "cursor moved through the status API");
      sendJson(res, 200, result);
    });
  }

  if (provider.queueAlerts !== undefined) {
    const queue = provider.queueAlerts.bind(provider);
    post("/api/alerts", alertsBody, async (alerts, req, res) => {
      const result = await queue(alerts);
      if (!result.ok) return sendJson(res, 400, { error: result.error });
      const rules = [...new Set(alerts.map((a) => a.alert.rule))];
      logger.info({ ...writer(req), rules, alerts: alerts.length, queued: result.queued, already_queued: result.already_queued }, "alerts queued through the status API");
      sendJson(res, 200, result);
    });
  }

  if (provider.changeSilences !== undefined) {
    const change = provider.changeSilences.bind(provider);
    post("/api/silences", silenceBody, async (asked, req, res) => {
      const result = await change(asked);
      if (!result.ok) return sendJson(res, result.status, { error: result.error });
      const { id, rule, match, expires_at } = result.silence;
      logger.info({ ...writer(req), silence: id, rule, match, expires_at, ...("add" in asked ? { reason: result.silence.reason } : {}) }, "add" in asked ? "silence added through the status API" : "silence removed through the status API");
      sendJson(res, 200, result);
    });
  }
  return routes;
}
