import { secretsOfUrl } from "../common/url-secrets.js";
import { sinkDefinitionOf } from "../notify/sinks/index.js";
import type { Config } from "./types.js";

/**
 * Every secret value in the config, for the logger's scrubber: the explorer API key, the
 * status token, Slack/Discord/webhook URLs (the URL is the credential), webhook signing
 * secrets and header values (often an Authorization), SMTP user and password, Telegram
 * bot tokens, PagerDuty routing keys, the PostgreSQL store URL and its password; and the
 * secret-bearing parts of every URL (a provider key in `chain.rpc_url`), which a server may
 * echo back in an error that reaches a log line, /readyz or an operational alert: of the
 * endpoints (explorer.base_url, chain.rpc_url, store.url, the sinks' secret URLs) every
 * part but names, of any other URL in the config the key-like parts (src/common/url-secrets.ts).
 */
export function secretsOfConfig(config: Config): string[] {
  const secrets = new Set<string>();
  const add = (value: string | undefined) => {
    if (value !== undefined && value !== "") secrets.add(value);
  };
  add(config.explorer.api_key);
  add(config.status.token);
  add(config.store.url);
  add(passwordOf(config.store.url));
  const endpoints = [config.explorer.base_url, config.chain.rpc_url, config.store.url];
  for (const sink of Object.values(config.sinks)) {
    const values = sinkDefinitionOf(sink.type)?.secrets(sink) ?? [];
    values.forEach(add);
    endpoints.push(...values);
  }
  for (const url of endpoints) if (url !== undefined) secretsOfUrl(url, "endpoint").forEach(add);
  for (const text of stringsOf(config)) secretsOfUrl(text).forEach(add);
  return [...secrets];
}

/** Every string value in the config, however deep: a URL may sit under any key. */
function stringsOf(value: unknown, out: string[] = [], depth = 0): string[] {
  if (typeof value === "string") out.push(value);
  else if (value !== null && typeof value === "object" && depth < 64) for (const inner of Object.values(value)) stringsOf(inner, out, depth + 1);
  return out;
}

/** The password inside a postgres:// URL, decoded: a driver's error may quote it alone. */
function passwordOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return undefined;
  }
}
