import type { ServerResponse } from "node:http";
import type { ApiError } from "./api.js";
import type { Meter } from "./meter.js";

/** Writes an answer and counts it (operation, status) in the meter. */
export function createResponder(meter: Meter) {
  const send = (res: ServerResponse, op: string, status: number, body: string, headers: Record<string, string> = {}) => {
    meter.request(op, String(status));
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers });
    res.end(body);
  };
  const sendError = (res: ServerResponse, op: string, error: ApiError) => send(res, op, error.status, JSON.stringify(error.body()));
  return { send, sendError };
}

export type Responder = ReturnType<typeof createResponder>;
