/**
 * The parts of a URL that carry a credential: hosted JSON-RPC and API endpoints put the
 * key in the user info (`https://user:pass@…`), in a path segment (`/v3/9f3c…`,
 * `/<40 hex>/`) or in the query (`?apikey=…`). Whoever shows a URL (a log line, /readyz,
 * `kaiawatch validate`) shows it through `redactUrl`, and the logger's scrubber learns
 * `secretsOfUrl`, so a server that echoes the URL in an error page is scrubbed as well.
 */

/** What replaces a secret part when a URL is shown. */
export const REDACTED = "[redacted]";

/**
 * A path segment that looks like a key rather than a name: at least 16 characters of one
 * token (no spaces), with letters and digits both. "v3", "kaia-mainnet-archive" and
 * "public-en" are names; "9f3c2a…", "AbC123…" are keys. Over-matching only hides a segment.
 */
export function looksLikeKey(segment: string): boolean {
  return segment.length >= 16 && /^[A-Za-z0-9._~:=+-]+$/.test(segment) && /[0-9]/.test(segment) && /[A-Za-z]/.test(segment);
}

function parse(url: string): URL | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return undefined;
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Every secret-bearing part of a URL, as written and percent-decoded (an error may quote
 * either): user name, password, key-like path segments and every query value. Empty for
 * a text that is not a URL with a scheme and `//`.
 */
export function secretsOfUrl(url: string): string[] {
  const parsed = parse(url);
  if (parsed === undefined) return [];
  const found = new Set<string>();
  const add = (value: string) => {
    if (value === "") return;
    found.add(value);
    found.add(decoded(value));
  };
  add(parsed.username);
  add(parsed.password);
  if (parsed.username !== "" || parsed.password !== "") add(`${parsed.username}${parsed.password !== "" ? `:${parsed.password}` : ""}`);
  for (const segment of parsed.pathname.split("/")) if (looksLikeKey(decoded(segment))) add(segment);
  // Raw values too: URLSearchParams decodes "+" to a space, an echo of the URL keeps it.
  for (const pair of parsed.search.replace(/^\?/, "").split("&")) {
    const equals = pair.indexOf("=");
    if (equals >= 0) add(pair.slice(equals + 1));
  }
  for (const value of parsed.searchParams.values()) add(value);
  return [...found];
}

/**
 * The URL to show: user info, key-like path segments and query values replaced by
 * [redacted]; query names, host and the other segments kept, so the operator still sees
 * which endpoint it is. A text that is not a URL is returned as it is.
 */
export function redactUrl(url: string): string {
  const parsed = parse(url);
  if (parsed === undefined) return url;
  const userinfo = parsed.username !== "" || parsed.password !== "" ? `${REDACTED}@` : "";
  const path = parsed.pathname
    .split("/")
    .map((segment) => (looksLikeKey(decoded(segment)) ? REDACTED : segment))
    .join("/");
  const query = parsed.search === "" ? "" : `?${parsed.search.slice(1).split("&").map((pair) => (pair.includes("=") ? `${pair.slice(0, pair.indexOf("="))}=${REDACTED}` : pair)).join("&")}`;
  // Kept as written: new URL() adds a "/" path to a bare origin, which the config did not say.
  const shownPath = path === "/" && !url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "").startsWith("/") ? "" : path;
  return `${parsed.protocol}//${userinfo}${parsed.host}${shownPath}${query}${parsed.hash === "" ? "" : `#${REDACTED}`}`;
}
