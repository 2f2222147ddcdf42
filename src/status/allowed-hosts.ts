import { isIP } from "node:net";

/**
 * Defeats DNS rebinding: a page on evil.example whose name is made to resolve to 127.0.0.1
 * reaches the status server from the victim's browser as a same-origin request, token or
 * not (the page is readable without one). The browser still sends `Host: evil.example`,
 * so only names the operator chose are served: loopback names, the listen host, and
 * `status.allowed_hosts`. An IP address in Host is always accepted: a rebinding attack
 * needs a name, and probes (Kubernetes, Docker) address the server by IP.
 */
export function createHostCheck(listenHost: string, allowedHosts: readonly string[] = []): (hostHeader: string | undefined) => boolean {
  const allowed = new Set(["localhost", ...allowedHosts.map(normalise)]);
  if (!isWildcard(listenHost)) allowed.add(normalise(listenHost));
  return (hostHeader) => {
    // HTTP/1.0 clients may send none; a browser always does.
    if (hostHeader === undefined || hostHeader === "") return true;
    const name = hostnameOf(hostHeader);
    if (name === undefined) return false;
    return isIP(name) !== 0 || allowed.has(name) || name.endsWith(".localhost");
  };
}

/** True for 127.0.0.0/8, ::1 and localhost: addresses other machines cannot reach. */
export function isLoopbackHost(host: string): boolean {
  const name = normalise(host);
  if (name === "localhost" || name.endsWith(".localhost") || name === "::1") return true;
  if (isIP(name) === 4) return name.startsWith("127.");
  return /^::ffff:127\./.test(name);
}

function isWildcard(host: string): boolean {
  const name = normalise(host);
  return name === "0.0.0.0" || name === "::" || name === "";
}

/** Lowercase, without brackets around IPv6 and without a trailing dot (`localhost.` is `localhost`). */
function normalise(host: string): string {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
}

/** The name part of a Host header ("[::1]:9464" → "::1"); undefined when it is malformed. */
function hostnameOf(header: string): string | undefined {
  const value = header.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::[0-9]{1,5})?$/.exec(value);
  if (bracketed) return bracketed[1];
  const plain = /^([a-z0-9.-]+)(?::[0-9]{1,5})?$/.exec(value);
  return plain?.[1]?.replace(/\.$/, "");
}
