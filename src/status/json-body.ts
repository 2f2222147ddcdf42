import type { IncomingMessage } from "node:http";

/** Why a write's body is refused, with the status it is answered with. */
export type BodyRefusal = { ok: false; status: 400 | 413 | 415; error: string };

export type BodyReading<T> = { ok: true; value: T } | BodyRefusal;

/** What the body of one write route holds: its largest size, and the check that turns its JSON into a T. */
export interface BodyKind<T> {
  readonly maxBytes: number;
  check(value: unknown): BodyReading<T>;
}

/** The body of a request as `kind` reads it: JSON of at most its size, then its check. */
export async function readBody<T>(req: IncomingMessage, kind: BodyKind<T>): Promise<BodyReading<T>> {
  const body = await readJsonBody(req, kind.maxBytes);
  return body.ok ? kind.check(body.value) : body;
}

/** A body of the right JSON but the wrong shape: a 400 that says what was expected. */
export function badBody(error: string): BodyRefusal {
  return { ok: false, status: 400, error };
}

/** The fields of a JSON object; undefined for anything else (null, an array, a string, a number). */
export function fieldsOf(value: unknown): Record<string, unknown> | undefined {
  return value === null || typeof value !== "object" || Array.isArray(value) ? undefined : (value as Record<string, unknown>);
}

/**
 * Reads a request body of at most `maxBytes` as JSON. Only `content-type: application/json`
 * is taken: a browser cannot send that to another origin without a CORS preflight, which this
 * server never grants, so a web page the operator visits cannot forge a write to it.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyReading<unknown>> {
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
    return badBody("the body is not JSON");
  }
}
