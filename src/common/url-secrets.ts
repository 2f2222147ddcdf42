/**
 * The parts of a URL that carry a credential: hosted JSON-RPC and API endpoints put the
 * key in the user info (`https://user:pass@…`), in a path segment (`/v2/Kx_7-q`, `/<40 hex>/`)
 * or in the query (`?apikey=…`). Whoever shows a URL (a log line, /readyz, `kaiawatch
 * validate`) shows it through `redactUrl`, and the scrubber learns `secretsOfUrl`, so a
 * server that echoes the URL or the key in an error page is scrubbed as well.
 *
 * A key has no shape to know it by (a provider's may be 6 characters of letters, `_` and
 * `-`), so the URLs the config names as endpoints (explorer.base_url, chain.rpc_url,
 * store.url, a sink's URL) count every path segment and query value as secret but the names:
 * lowercase words joined by `-` (`rpc`, `public-en`, `kaia-mainnet-archive`) and versions
 * (`v2`, `v1.1`). A name is what a text may well say for other reasons ("v2", "mainnet"),
 * so scrubbing it would erase it everywhere; a key looks like neither. Any other URL in the
 * config (a link in a template) counts its user info, its query values but names, and only
 * the path segments that look like a key (`looksLikeKey`): its other segments are ids and
 * addresses, which alerts must keep.
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

/** A part of an endpoint URL that is a name, not a key: lowercase words joined by `-`, or a version (`v2`, `v1.1`). */
export function isUrlName(part: string): boolean {
  return /^[a-z]+(?:-[a-z]+)*$/.test(part) || /^v\d+(?:\.\d+)*$/.test(part);
}

/** Which path segments of a URL count as secret: an endpoint's every one but names, or only key-like ones. */
export type UrlSecretRule = "endpoint" | "key-like";

function isSecretSegment(segment: string, rule: UrlSecretRule): boolean {
  if (segment === "") return false;
  return rule === "endpoint" ? !isUrlName(segment) : looksLikeKey(segment);
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
 * either): user name, password, the secret path segments of `rule`, and every query value
 * that is not a name (`?network=mainnet` must not erase "mainnet" from every text); with a
 * secret segment, the path from the start too (a node's 404 quotes `/v2/KEY`, caught even
 * when KEY is shorter than the scrubber's minimum). Empty for a text that is not a URL
 * with a scheme and `//`.
 */
export function secretsOfUrl(url: string, rule: UrlSecretRule = "key-like"): string[] {
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
  const segments = parsed.pathname.split("/");
  const secret = segments.map((segment) => isSecretSegment(decoded(segment), rule));
  segments.forEach((segment, index) => secret[index] && add(segment));
  const firstSecret = secret.indexOf(true);
  if (firstSecret > 0) add(segments.slice(0, firstSecret + 1).join("/"));
  // Raw values too: URLSearchParams decodes "+" to a space, an echo of the URL keeps it.
  const addValue = (value: string) => {
    if (!isUrlName(decoded(value))) add(value);
  };
  for (const pair of parsed.search.replace(/^\?/, "").split("&")) {
    const equals = pair.indexOf("=");
    if (equals >= 0) addValue(pair.slice(equals + 1));
  }
  for (const value of parsed.searchParams.values()) addValue(value);
  return [...found];
}

/**
 * The URL to show: user info, every path segment but names (the endpoint rule: a URL shown
 * is hidden as an endpoint's, since hiding too much costs only a segment) and every query
 * value replaced by [redacted]; query names, host and the names kept, so the operator
 * still sees which endpoint it is. A text that is not a URL is returned as it is.
 */
export function redactUrl(url: string): string {
  const parsed = parse(url);
  if (parsed === undefined) return url;
  const userinfo = parsed.username !== "" || parsed.password !== "" ? `${REDACTED}@` : "";
  const path = parsed.pathname
    .split("/")
    .map((segment) => (isSecretSegment(decoded(segment), "endpoint") ? REDACTED : segment))
    .join("/");
  const query = parsed.search === "" ? "" : `?${parsed.search.slice(1).split("&").map((pair) => (pair.includes("=") ? `${pair.slice(0, pair.indexOf("="))}=${REDACTED}` : pair)).join("&")}`;
  // Kept as written: new URL() adds a "/" path to a bare origin, which the config did not say.
  const shownPath = path === "/" && !url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "").startsWith("/") ? "" : path;
  return `${parsed.protocol}//${userinfo}${parsed.host}${shownPath}${query}${parsed.hash === "" ? "" : `#${REDACTED}`}`;
}
