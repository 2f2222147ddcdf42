import type { IncomingMessage } from "node:http";

export type JsonBody = { ok: true; value: unknown } | { ok: false; status: 400 | 413 | 415; error: string };

/**
 * Reads a request body of at most `maxBytes` as JSON. Only `content-type: application/json`
 * is taken: a browser cannot send that to another origin without a CORS preflight, which this
 * server never grants, so a web page the operator visits cannot forge a write to it.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<JsonBody> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    req.resume();
    return { ok: false, status: 415, error: "send the body as JSON (content-type: application/json)" };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      req.resume();
      return { ok: false, status: 413, error: `the body is larger than ${maxBytes} bytes` };
    }
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown };
  } catch {
    return { ok: false, status: 400, error: "the body is not JSON" };
  }
}
