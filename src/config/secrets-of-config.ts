import { sinkDefinitionOf } from "../notify/sinks/index.js";
import type { Config } from "./types.js";

/**
 * Every secret value in the config, for the logger's scrubber: the explorer API key, the
 * status token, Slack/Discord/webhook URLs (the URL is the credential), webhook signing
 * secrets and header values (often an Authorization), SMTP user and password, Telegram
 * bot tokens, the PostgreSQL store URL and its password.
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
  for (const sink of Object.values(config.sinks)) sinkDefinitionOf(sink.type)?.secrets(sink).forEach(add);
  return [...secrets];
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
