import { sinkDefinitionOf } from "../notify/sinks/index.js";
import type { Config } from "./types.js";

/**
 * Every secret value in the config, for the logger's scrubber: the explorer API key, the
 * status token, Slack/Discord/webhook URLs (the URL is the credential), webhook signing
 * secrets and header values (often an Authorization), SMTP user and password, Telegram
 * bot tokens.
 */
export function secretsOfConfig(config: Config): string[] {
  const secrets = new Set<string>();
  const add = (value: string | undefined) => {
    if (value !== undefined && value !== "") secrets.add(value);
  };
  add(config.explorer.api_key);
  add(config.status.token);
  for (const sink of Object.values(config.sinks)) sinkDefinitionOf(sink.type)?.secrets(sink).forEach(add);
  return [...secrets];
}
