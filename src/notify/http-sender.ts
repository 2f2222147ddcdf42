import { parseRetryAfter } from "../common/retry-after.js";
import { request, type Dispatcher } from "undici";
import type { Common } from "../common/common.js";
import { SinkError } from "./sink.js";
import { cleanLine } from "../common/sanitize-text.js";

/**
 * The one HTTP sender behind the webhook, Slack, Discord, Telegram, PagerDuty and Teams sinks (as in
 * OpenZeppelin Monitor: payload builders over one sender). It POSTs JSON once and turns the
 * answer into success or a SinkError; retrying is the dispatcher's business.
 *
 * The URL is a secret for Slack, Discord and Telegram (it carries the token), so it never
 * appears in an error: the request is described by `target`, e.g. "sink ops (slack)".
 */
export interface JsonPost {
  url: string;
  /** Serialized JSON: the exact bytes that were signed, when signing. Not sent with GET or HEAD. */
  body: string;
  /** POST by default; the heartbeat sink pings with GET or HEAD too (a plain URL, healthchecks-style). */
  method?: "POST" | "GET" | "HEAD";
  headers?: Record<string, string>;
  timeoutMs: number;
  /** How errors name the destination, e.g. `sink ops-slack (slack)`. */
  target: string;
  /** Extra values to scrub from response excerpts quoted in errors (tokens, secrets). */
  secrets?: string[];
}

export interface HttpResponse {
  status: number;
  text: string;
}

export interface HttpSender {
  postJson(post: JsonPost, signal: AbortSignal): Promise<HttpResponse>;
}

export interface HttpSenderOptions {
  /** An undici dispatcher (Agent, Pool); the global one by default. */
  dispatcher?: Dispatcher;
}

/** Bodies are read up to this size: receivers answer "ok" or a short JSON error. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export function createHttpSender(common: Common, options: HttpSenderOptions = {}): HttpSender {
  return {
    async postJson(post, signal) {
      const timeout = AbortSignal.timeout(post.timeoutMs);
      const combined = AbortSignal.any([signal, timeout]);
      let status: number;
      let headers: Record<string, string | string[] | undefined>;
      let text: string;
      try {
        const method = post.method ?? "POST";
        const response = await request(post.url, {
          method,
          ...(method === "POST" ? { body: post.body } : {}),
          headers: { ...(method === "POST" ? { "content-type": "application/json" } : {}), "user-agent": "kaiawatch", ...post.headers },
          signal: combined,
          headersTimeout: post.timeoutMs,
          bodyTimeout: post.timeoutMs,
          ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
        });
        status = response.statusCode;
        headers = response.headers;
        text = await readCapped(response.body);
      } catch (error) {
        if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : error;
        if (timeout.aborted || isTimeout(error)) {
          throw new SinkError("KW_NOTIFY_TIMEOUT", `${post.target}: no answer within ${post.timeoutMs} ms`, { permanent: false });
        }
        throw new SinkError("KW_NOTIFY_NETWORK", `${post.target}: network error (${errorCode(error)})`, { permanent: false });
      }
      if (status >= 200 && status < 300) return { status, text };

      const excerpt = responseExcerpt(text, [...urlSecrets(post.url), ...(post.secrets ?? [])]);
      const details = excerpt === "" ? undefined : `receiver said: ${excerpt}`;
      if (status >= 300 && status < 400) {
        throw new SinkError("KW_NOTIFY_REDIRECT", `${post.target}: answered HTTP ${status}, a redirect, which is not followed (configure the final URL)`, { permanent: true, status, ...(details === undefined ? {} : { details }) });
      }
      const retryable = status === 408 || status === 429 || status >= 500;
      const retryAfterMs = retryable ? (parseRetryAfter(headers["retry-after"], common.now()) ?? retryAfterFromBody(text)) : undefined;
      throw new SinkError("KW_NOTIFY_HTTP", `${post.target}: answered HTTP ${status}${excerpt === "" ? "" : ` (${excerpt})`}`, {
        permanent: !retryable,
        status,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...(details === undefined ? {} : { details }),
      });
    },
  };
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy?: () => void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_RESPONSE_BYTES) {
      body.destroy?.();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString("utf8");
}

function isTimeout(error: unknown): boolean {
  const code = errorCode(error);
  return code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" || code === "UND_ERR_CONNECT_TIMEOUT" || code === "ETIMEDOUT";
}

/** The most specific error code in the chain (ECONNREFUSED beats UND_ERR_SOCKET); never a message, which could quote the URL. */
function errorCode(error: unknown): string {
  let found = "unknown";
  for (let e: unknown = error, depth = 0; e != null && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") found = code;
    e = e instanceof Error ? e.cause : undefined;
  }
  return found;
}

/**
 * The parts of a URL a receiver might echo back: the whole URL, its path, and each long path
 * segment (Slack's and Discord's webhook secrets are path segments).
 */
function urlSecrets(url: string): string[] {
  try {
    const u = new URL(url);
    const path = `${u.pathname}${u.search}`;
    return [url, path, ...u.pathname.split("/").filter((segment) => segment.length >= 8)].sort((a, b) => b.length - a.length);
  } catch {
    return [url];
  }
}

/** A short, sanitized quote of a receiver's error answer with secrets removed. */
export function responseExcerpt(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 6) out = out.split(secret).join("[redacted]");
  return cleanLine(out.trim(), 200);
}


/** Discord (`retry_after`) and Telegram (`parameters.retry_after`) say it in the body, in seconds. */
function retryAfterFromBody(text: string): number | undefined {
  try {
    const body = JSON.parse(text) as { retry_after?: unknown; parameters?: { retry_after?: unknown } };
    const seconds = body.retry_after ?? body.parameters?.retry_after;
    return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  } catch {
    return undefined;
  }
}
