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
  for (const sink of Object.values(config.sinks)) {
    switch (sink.type) {
      case "slack":
      case "discord":
        add(sink.url);
        break;
      case "webhook":
        add(sink.url);
        add(sink.secret);
        Object.values(sink.headers).forEach(add);
        break;
      case "email":
        add(sink.smtp.user);
        add(sink.smtp.pass);
        break;
      case "telegram":
        add(sink.bot_token);
        break;
      case "console":
      case "file":
        break;
    }
  }
  return [...secrets];
}
