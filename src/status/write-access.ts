import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { bearerTokenMatches } from "./bearer.js";

export type WriteVerdict = { ok: true; by: "token" | "loopback" } | { ok: false; status: 401 | 403; error: string };

/**
 * Who may change a running daemon (re-queue dead letters, move cursors): with `status.token`
 * configured, whoever sends it; without one, only a process on this machine (the peer's
 * address is loopback), as `kaiawatch outbox retry` or `cursors --set` run beside the daemon.
 * Requests from another machine without a token are refused even when the server listens on
 * every interface: a token-less setup is a single-machine setup.
 */
export function checkWriteAccess(req: IncomingMessage, token: string | undefined): WriteVerdict {
  if (token !== undefined) {
    return bearerTokenMatches(req.headers.authorization, token)
      ? { ok: true, by: "token" }
      : { ok: false, status: 401, error: "this endpoint needs Authorization: Bearer <status.token>" };
  }
  return isLoopbackAddress(req.socket.remoteAddress)
    ? { ok: true, by: "loopback" }
    : { ok: false, status: 403, error: "without status.token, only processes on the daemon's machine (loopback) may change it; set status.token to allow this" };
}

/** 127.0.0.0/8, ::1 and IPv4-mapped 127.x: a peer on this machine. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (address === "::1") return true;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return isIP(v4) === 4 && v4.startsWith("127.");
}
