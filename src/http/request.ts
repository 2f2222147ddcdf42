import { isAscii } from "node:buffer";
import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import { HttpDeadlineError, HttpNetworkError, HttpResponseTooLargeError, HttpTimeoutError, type TimeoutPhase } from "./errors.js";
import { linkSignals } from "../common/signals.js";
import { parseRetryAfter } from "../common/retry-after.js";

export interface HttpRequest {
  /** Names the request in errors (an operation, or "eth_blockNumber"). */
  operation: string;
  method: "GET" | "POST";
  /** Where the request goes: a Pool serves its own origin, an Agent picks its pool by this. */
  origin: string;
  /** Path and query, relative to the origin. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  maxBytes: number;
  /** The longest the whole request may take, to the body's last byte; none when absent. */
  deadlineMs?: number;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

const TIMEOUT_PHASES: Record<string, TimeoutPhase> = {
  UND_ERR_CONNECT_TIMEOUT: "connect",
  UND_ERR_HEADERS_TIMEOUT: "headers",
  UND_ERR_BODY_TIMEOUT: "body",
};

/**
 * One request on an undici dispatcher (a Pool from createPool, or any dispatcher handed in:
 * keep-alive and timeouts are set there). Reads the body up to `maxBytes` and gives up past
 * it. Transport failures become the neutral errors of ./errors.ts, which each client names as
 * its own; an abort rethrows the signal's reason untouched so that callers recognise a
 * shutdown. Any status is returned: the caller decides what a non-2xx means.
 */
export async function sendRequest(dispatcher: Dispatcher, request: HttpRequest): Promise<HttpResponse> {
  if (request.deadlineMs === undefined) return await send(dispatcher, request);
  // A timer and a controller per request: the deadline is a wall-clock bound by nature.
  // The link to the caller's signal goes through linkSignals' fan-out (one listener per
  // long-lived signal), so requests in flight add no listener to it.
  const { deadlineMs, operation } = request;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new HttpDeadlineError(operation, deadlineMs)), deadlineMs);
  const linked = linkSignals(request.signal, deadline.signal);
  try {
    return await send(dispatcher, { ...request, signal: linked.signal });
  } catch (error) {
    // The caller's abort (a shutdown, a tick's own deadline) wins over ours.
    if (request.signal.aborted) throw request.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    linked.dispose();
  }
}

async function send(dispatcher: Dispatcher, request: HttpRequest): Promise<HttpResponse> {
  const { operation, signal, maxBytes } = request;
  try {
    const response = await dispatcher.request({
      origin: request.origin,
      path: request.path,
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      signal,
    });
    const { body } = response;
    const declared = Number(response.headers["content-length"]);
    if (declared > maxBytes) {
      discard(body);
      throw new HttpResponseTooLargeError(operation, maxBytes, response.statusCode);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) {
        discard(body);
        throw new HttpResponseTooLargeError(operation, maxBytes, response.statusCode);
      }
      chunks.push(chunk);
    }
    return { status: response.statusCode, headers: response.headers, text: decodeBody(chunks, total) };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof HttpResponseTooLargeError) throw error;
    const code = (error as { code?: unknown } | null)?.code;
    const phase = typeof code === "string" ? TIMEOUT_PHASES[code] : undefined;
    if (phase) throw new HttpTimeoutError(operation, phase, error);
    throw new HttpNetworkError(operation, error);
  }
}

/** Bodies up to this size are joined in one buffer kept for the next (see decodeBody); larger ones in a buffer of their own. */
const JOIN_BUFFER_MAX = 4 * 1024 * 1024;
let joinBuffer: Buffer | undefined;

/**
 * The shortest latin1 text Node makes an external string of (EXTERN_APEX + 1 in its
 * src/string_bytes.cc, unchanged since 2014): its bytes are malloc'd outside V8's heap, and
 * that memory is reused from one answer to the next. Shorter text is allocated on the heap,
 * and from V8's 128 KiB object limit in its large-object space, where every string is a new
 * mapping of memory the kernel fills on first touch: decoding and parsing a body of 256 KiB
 * to 1 MiB took ~6.5 ns a byte that way against ~3.5 ns as an external string.
 */
const EXTERNAL_TEXT_MIN = 0xfbee9 + 1;
/** From here up to EXTERNAL_TEXT_MIN an ASCII body is padded to an external string: below it, parsing the padding costs more than it saves. */
const PAD_FROM = 256 * 1024;

/**
 * A body's chunks as text (UTF-8), for JSON.parse: it may end in spaces that the body did
 * not have. Three costs that were half of reading a page of 2,000 records before parsing it
 * (bench/ingest.bench.ts): a fresh megabyte buffer per answer to join the chunks into,
 * whose pages the kernel maps on first touch (Buffer.concat); the UTF-8 decoder, which
 * takes twice as long as a byte copy even when every byte is ASCII; and a text of 128 KiB
 * to 1 MiB on V8's heap (EXTERNAL_TEXT_MIN). The chunks are copied into one buffer kept
 * for the next answer (synchronously: no other answer can use it meanwhile); a body that
 * is all ASCII, which an explorer answer nearly always is, is read byte for byte (latin1,
 * for ASCII the same text), and one of PAD_FROM bytes or more is followed by spaces up to
 * EXTERNAL_TEXT_MIN, which JSON allows after a value. Any other byte and the body is
 * decoded as UTF-8, as it is.
 */
export function decodeBody(chunks: readonly Buffer[], total: number): string {
  if (chunks.length === 0) return "";
  const padded = total >= PAD_FROM && total < EXTERNAL_TEXT_MIN;
  let bytes: Buffer;
  if (chunks.length === 1 && !padded) bytes = chunks[0] as Buffer;
  else if (total > JOIN_BUFFER_MAX) bytes = Buffer.concat(chunks, total);
  else {
    const size = padded ? EXTERNAL_TEXT_MIN : total;
    if (joinBuffer === undefined || joinBuffer.length < size) joinBuffer = Buffer.allocUnsafeSlow(Math.min(JOIN_BUFFER_MAX, 2 ** Math.ceil(Math.log2(size))));
    let at = 0;
    for (const chunk of chunks) {
      joinBuffer.set(chunk, at);
      at += chunk.length;
    }
    bytes = joinBuffer.subarray(0, total);
  }
  if (!isAscii(bytes)) return bytes.toString("utf8");
  if (!padded) return bytes.toString("latin1");
  (joinBuffer as Buffer).fill(0x20, total, EXTERNAL_TEXT_MIN);
  return (joinBuffer as Buffer).toString("latin1", 0, EXTERNAL_TEXT_MIN);
}

/** Stops reading a body; undici reports the abort as an 'error' event that nobody else would handle. */
function discard(body: Dispatcher.ResponseData["body"]): void {
  body.on("error", () => {});
  body.destroy();
}

/** The answer's Retry-After in milliseconds from `nowMs`, when it carries one this reads. */
export function retryAfterOfAnswer(response: HttpResponse, nowMs: number): number | undefined {
  return parseRetryAfter(response.headers["retry-after"], nowMs);
}

/** The start of a body for an error message: one line, short. */
export function excerptOf(text: string, length = 200): string {
  const cut = text.length > length ? `${text.slice(0, length)}…` : text;
  return cut.replace(/[\r\n\t]+/g, " ");
}
