/**
 * The base of every error kaiawatch raises on purpose. Like undici's errors each one has
 * a stable `code` a user can search for; like viem's it carries a short message, optional
 * details and the cause, so a log line says what happened without a stack trace.
 */
export class KaiawatchError extends Error {
  override name = "KaiawatchError";
  readonly code: string;
  readonly details: string | undefined;

  constructor(code: string, message: string, options: { cause?: unknown; details?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

export function isKaiawatchError(error: unknown): error is KaiawatchError {
  return error instanceof KaiawatchError;
}

/**
 * The code an error-level log line carries (log-based alerting keys on it): the first
 * KaiawatchError's code in the cause chain, else the caller's code for what failed, else
 * KW_UNEXPECTED (a bug: it names no cause a user could search for).
 */
export function errorCode(error: unknown, fallback = "KW_UNEXPECTED"): string {
  for (let e: unknown = error, depth = 0; e != null && depth < 8; depth++) {
    if (e instanceof KaiawatchError) return e.code;
    e = e instanceof Error ? e.cause : undefined;
  }
  return fallback;
}

/** A one-line description of any thrown value, for logs and CLI output. */
export function describeError(error: unknown): string {
  if (error instanceof KaiawatchError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** True when the error (or a cause in its chain) is an abort, i.e. a requested shutdown. */
export function isAbortError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e != null && depth < 8; depth++) {
    if (e instanceof Error && (e.name === "AbortError" || (e as { code?: unknown }).code === "ABORT_ERR")) return true;
    e = e instanceof Error ? e.cause : undefined;
  }
  return false;
}
