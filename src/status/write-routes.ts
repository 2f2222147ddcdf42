import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../common/logger.js";
import { parseAlertsBody } from "./alerts-body.js";
import { parseCursorBody } from "./cursor-body.js";
import { parseRequeueBody } from "./requeue-body.js";
import { parseSilenceBody } from "./silence-body.js";
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
  if (provider.requeueDeadLetters !== undefined) {
    const requeue = provider.requeueDeadLetters.bind(provider);
    routes["/api/dead-letters/requeue"] = {
      methods: ["POST"],
      auth: true,
      write: true,
      handler: async (req, res) => {
        const parsed = await parseRequeueBody(req);
        if (!parsed.ok) return sendJson(res, parsed.status, { error: parsed.error });
        const result = await requeue(parsed.selector);
        logger.info({ ...writer(req), requeued: result.requeued, unmatched: result.unmatched.length, all: "all" in parsed.selector }, "dead letters re-queued through the status API");
        sendJson(res, 200, result);
      },
    };
  }
  if (provider.moveCursors !== undefined) {
    const move = provider.moveCursors.bind(provider);
    routes["/api/cursors"] = {
      methods: ["POST"],
      auth: true,
      write: true,
      handler: async (req, res) => {
        const parsed = await parseCursorBody(req);
        if (!parsed.ok) return sendJson(res, parsed.status, { error: parsed.error });
        const result = await move(parsed.moves);
        if (!result.ok) return sendJson(res, 400, { error: result.error });
        for (const m of result.moved) logger.info({ ...writer(req), source: m.source, watch: m.watch, from: m.from, to: m.to }, "cursor moved through the status API");
        sendJson(res, 200, result);
      },
    };
  }

  if (provider.queueAlerts !== undefined) {
    const queue = provider.queueAlerts.bind(provider);
    routes["/api/alerts"] = {
      methods: ["POST"],
      auth: true,
      write: true,
      handler: async (req, res) => {
        const parsed = await parseAlertsBody(req);
        if (!parsed.ok) return sendJson(res, parsed.status, { error: parsed.error });
        const result = await queue(parsed.alerts);
        if (!result.ok) return sendJson(res, 400, { error: result.error });
        const rules = [...new Set(parsed.alerts.map((a) => a.alert.rule))];
        logger.info({ ...writer(req), rules, alerts: parsed.alerts.length, queued: result.queued, already_queued: result.already_queued }, "alerts queued through the status API");
        sendJson(res, 200, result);
      },
    };
  }

  if (provider.changeSilences !== undefined) {
    const change = provider.changeSilences.bind(provider);
    routes["/api/silences"] = {
      methods: ["POST"],
      auth: true,
      write: true,
      handler: async (req, res) => {
        const parsed = await parseSilenceBody(req);
        if (!parsed.ok) return sendJson(res, parsed.status, { error: parsed.error });
        const result = await change(parsed.change);
        if (!result.ok) return sendJson(res, result.status, { error: result.error });
        const { id, rule, match, expires_at } = result.silence;
        logger.info({ ...writer(req), silence: id, rule, match, expires_at, ...("add" in parsed.change ? { reason: result.silence.reason } : {}) }, "add" in parsed.change ? "silence added through the status API" : "silence removed through the status API");
        sendJson(res, 200, result);
      },
    };
  }
  return routes;
}
