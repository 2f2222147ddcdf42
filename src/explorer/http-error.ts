import { excerptOf, retryAfterOfAnswer, type HttpResponse } from "../http/request.js";
import type { HttpErrorOptions } from "./errors.js";
import type { ApiErrorBody } from "./types.js";

/** What an error answer of the explorer says: its status, the API's `{code,title,message}` body (or an excerpt) and its Retry-After. */
export function httpErrorOptionsOf(operation: string, response: HttpResponse, nowMs: number): HttpErrorOptions {
  const body = apiErrorBody(response.text);
  const retryAfterMs = retryAfterOfAnswer(response, nowMs);
  return { operation, status: response.status, ...(body ? { body } : { excerpt: excerptOf(response.text, 120) }), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

function apiErrorBody(text: string): ApiErrorBody | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null) return undefined;
    const { code, title, message } = value as Record<string, unknown>;
    if (typeof code !== "string") return undefined;
    const body: ApiErrorBody = { code: code.slice(0, 100) };
    if (typeof title === "string") body.title = title.slice(0, 200);
    if (typeof message === "string") body.message = message.slice(0, 500);
    return body;
  } catch {
    return undefined;
  }
}
