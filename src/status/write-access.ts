import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { bearerTokenMatches } from "./bearer.js";

export type WriteVerdict = { ok: true; by: "token" | "loopback" } | { ok: false; status: 401 | 403; error: string };

export interface WriteAuth {
  /** The token writes need: `status.token`, or the generated one (write-token.ts); none only with `trustLoopback`. */
  token: string | undefined;
  /** `status.trust_loopback`: a process on this machine may write without a token. */
  trustLoopback: boolean;
}

/**
 * Who may change a running daemon (re-queue dead letters, move cursors, silence rules,
 * queue alerts): whoever sends the token, from anywhere. Loopback alone is enough only with
 * `status.trust_loopback: true`, since any local user or process is a loopback peer; then a
 * peer from elsewhere still needs `status.token`.
 */
export function checkWriteAccess(req: IncomingMessage, auth: WriteAuth): WriteVerdict {
  if (auth.trustLoopback && isLoopbackAddress(req.socket.remoteAddress)) return { ok: true, by: "loopback" };
  if (auth.token !== undefined) {
    return bearerTokenMatches(req.headers.authorization, auth.token)
      ? { ok: true, by: "token" }
      : { ok: false, status: 401, error: "this endpoint needs Authorization: Bearer <token>: status.token, or the token in status.write_token_file (kaiawatch commands send it)" };
  }
  return { ok: false, status: 403, error: "with status.trust_loopback and no status.token, only processes on the daemon's machine (loopback) may change it; set status.token to allow this" };
}

/** 127.0.0.0/8, ::1 and IPv4-mapped 127.x: a peer on this machine. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (address === "::1") return true;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return isIP(v4) === 4 && v4.startsWith("127.");
}
