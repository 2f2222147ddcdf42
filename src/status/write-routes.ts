import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../common/logger.js";
import { alertsBody } from "./alerts-body.js";
import { cursorBody } from "./cursor-body.js";
import { readBody, type BodyKind } from "./json-body.js";
import { requeueBody } from "./requeue-body.js";
import { silenceBody } from "./silence-body.js";
import type { Route, StatusProvider } from "./status-server.js";

/** A write the provider refused as a whole (an unknown source or sink, a silence it does not hold). */
type Refused = { ok: false; error: string; status?: 400 | 404 };

function isRefused(result: object): result is Refused {
  // A result without ok (a re-queue's) is never a refusal.
  return "ok" in result && result.ok === false;
}

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
  /**
   * A POST that writes, when the provider offers the write: a body `kind` refuses, or a write
   * the provider refuses (400 unless it names its status), is answered with why; a write made
   * is logged with who made it, and answered with its result.
   */
  const post = <T, R extends object>(path: string, kind: BodyKind<T>, write: ((value: T) => Promise<R>) | undefined, log: (value: T, result: Exclude<R, Refused>, who: ReturnType<typeof writer>) => void) => {
    if (write === undefined) return;
    routes[path] = {
      methods: ["POST"],
      auth: true,
      write: true,
      handler: async (req, res) => {
        const body = await readBody(req, kind);
        if (!body.ok) return sendJson(res, body.status, { error: body.error });
        const result = await write(body.value);
        if (isRefused(result)) return sendJson(res, result.status ?? 400, { error: result.error });
        log(body.value, result as Exclude<R, Refused>, writer(req));
        sendJson(res, 200, result);
      },
    };
  };

  post("/api/dead-letters/requeue", requeueBody, provider.requeueDeadLetters?.bind(provider), (selector, result, who) => {
    logger.info({ ...who, requeued: result.requeued, unmatched: result.unmatched.length, all: "all" in selector }, "dead letters re-queued through the status API");
  });
  post("/api/cursors", cursorBody, provider.moveCursors?.bind(provider), (_moves, result, who) => {
    for (const m of result.moved) logger.info({ ...who, source: m.source, watch: m.watch, from: m.from, to: m.to }, "cursor moved through the status API");
  });
  post("/api/alerts", alertsBody, provider.queueAlerts?.bind(provider), (alerts, result, who) => {
    const rules = [...new Set(alerts.map((a) => a.alert.rule))];
    logger.info({ ...who, rules, alerts: alerts.length, queued: result.queued, already_queued: result.already_queued }, "alerts queued through the status API");
  });
  post("/api/silences", silenceBody, provider.changeSilences?.bind(provider), (asked, result, who) => {
    const { id, rule, match, expires_at } = result.silence;
    logger.info({ ...who, silence: id, rule, match, expires_at, ...("add" in asked ? { reason: result.silence.reason } : {}) }, "add" in asked ? "silence added through the status API" : "silence removed through the status API");
  });
  return routes;
}
