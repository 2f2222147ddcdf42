import type { Config } from "../config/index.js";
import { StatusError } from "../status/errors.js";
import { readWriteToken } from "../status/write-token.js";

/** How long a command waits for the running daemon to answer a write (a cursor move waits for a tick to end). */
const REQUEST_TIMEOUT_MS = 90_000;

/** The status API of the daemon that runs with this config, as a command beside it reaches it. */
export interface DaemonApi {
  readonly url: string;
  /** POSTs JSON; resolves with the status and the parsed answer (an `{error}` object on failure). */
  post(path: string, body: unknown, signal: AbortSignal): Promise<{ status: number; body: Record<string, unknown> }>;
}

/**
 * The address of the status server of the daemon that runs with this config (a wildcard
 * address is reached over loopback), or why there is none.
 */
export function statusUrlOf(config: Config): { url: string } | { unavailable: string } {
  const listen = config.status.listen;
  if (listen === false) return { unavailable: "status.listen is false, so the running daemon has no status API" };
  if (listen.port === 0) return { unavailable: "status.listen has port 0, so this command cannot know the running daemon's port" };
  const host = listen.host === "0.0.0.0" || listen.host === "" ? "127.0.0.1" : listen.host === "::" ? "::1" : listen.host;
  return { url: `http://${host.includes(":") ? `[${host}]` : host}:${listen.port}` };
}

/**
 * The running daemon's status API, read from the config: `status.listen` (a wildcard address
 * is reached over loopback) and the write token: `status.token` when set, else the one in
 * `status.write_token_file` (none with `status.trust_loopback`). Undefined with the reason
 * when the config gives no way in: no status server, port 0 (a port only the daemon
 * knows), or a token file this user cannot read.
 */
export function daemonApiOf(config: Config): DaemonApi | { unavailable: string } {
  const address = statusUrlOf(config);
  if ("unavailable" in address) return { unavailable: `${address.unavailable} to take the change` };
  const { url } = address;
  let token = config.status.token;
  // Without status.token, the daemon made a token at its first start; only its user can read it.
  if (token === undefined && !config.status.trust_loopback) {
    try {
      token = readWriteToken(config.status.write_token_file);
    } catch (error) {
      if (error instanceof StatusError) return { unavailable: `${error.code}: ${error.message}` };
      throw error;
    }
  }
  return {
    url,
    async post(path, body, signal) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      const response = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]) });
      const text = await response.text();
      let parsed: Record<string, unknown>;
      try {
        const value = JSON.parse(text) as unknown;
        parsed = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { error: text };
      } catch {
        parsed = { error: text.slice(0, 300) };
      }
      return { status: response.status, body: parsed };
    },
  };
}

/** One line for a refused or failed request: what the daemon said, or why it could not be reached. */
export function describeApiFailure(api: DaemonApi, outcome: { status: number; body: Record<string, unknown> } | Error): string {
  if (outcome instanceof Error) return `cannot reach the running daemon's status API at ${api.url}: ${outcome.message}`;
  const error = typeof outcome.body.error === "string" ? outcome.body.error : JSON.stringify(outcome.body);
  return `the running daemon's status API at ${api.url} answered ${outcome.status}: ${error}`;
}
