import type { Common } from "../common/common.js";
import type { Sink } from "./sink.js";
import type { SinkConfigProblem } from "./errors.js";
import { throwIfProblems } from "./sink-checks.js";
import { createConsoleSink, type ConsoleOptions } from "./sinks/console.js";
import { createDiscordSink, validateDiscordOptions, type DiscordOptions } from "./sinks/discord.js";
import { createEmailSink, validateEmailOptions, type EmailOptions } from "./sinks/email.js";
import { createFileSink, validateFileOptions, type FileOptions } from "./sinks/file.js";
import { createSlackSink, validateSlackOptions, type SlackOptions } from "./sinks/slack.js";
import { createTelegramSink, validateTelegramOptions, type TelegramOptions } from "./sinks/telegram.js";
import { createWebhookSink, validateWebhookOptions, type WebhookOptions } from "./sinks/webhook.js";

/** A sink's config as written under `sinks.NAME`, discriminated by `type`. */
export type SinkConfig =
  | ({ type: "slack" } & SlackOptions)
  | ({ type: "discord" } & DiscordOptions)
  | ({ type: "telegram" } & TelegramOptions)
  | ({ type: "email" } & EmailOptions)
  | ({ type: "webhook" } & WebhookOptions)
  | ({ type: "console" } & ConsoleOptions)
  | ({ type: "file" } & FileOptions);

export type SinkType = SinkConfig["type"];
export const SINK_TYPES: readonly SinkType[] = ["slack", "discord", "telegram", "email", "webhook", "console", "file"];

/**
 * Every problem with a sink's options (URL scheme, template syntax with position, header
 * names, addresses …), keyed below `sinks.NAME`, for the config loader to report at once.
 */
export function validateSinkConfig(config: SinkConfig): SinkConfigProblem[] {
  switch (config.type) {
    case "slack": return validateSlackOptions(config);
    case "discord": return validateDiscordOptions(config);
    case "telegram": return validateTelegramOptions(config);
    case "email": return validateEmailOptions(config);
    case "webhook": return validateWebhookOptions(config);
    case "console": return [];
    case "file": return validateFileOptions(config);
    default: return [{ key: "type", message: `unknown sink type '${String((config as { type?: unknown }).type)}' (one of ${SINK_TYPES.join(", ")})` }];
  }
}

/** Build a sink; throws SinkConfigError (code KW_NOTIFY_CONFIG) listing every problem. */
export function createSink(common: Common, name: string, config: SinkConfig): Sink {
  switch (config.type) {
    case "slack": return createSlackSink(common, name, config);
    case "discord": return createDiscordSink(common, name, config);
    case "telegram": return createTelegramSink(common, name, config);
    case "email": return createEmailSink(common, name, config);
    case "webhook": return createWebhookSink(common, name, config);
    case "console": return createConsoleSink(common, name, config);
    case "file": return createFileSink(common, name, config);
    default:
      throwIfProblems(name, validateSinkConfig(config));
      throw new Error("unreachable");
  }
}
