import { z } from "zod";
import { consoleSink } from "./console.js";
import type { SinkDefinition, SinkOptionsOf } from "./define-sink.js";
import { discordSink } from "./discord.js";
import { emailSink } from "./email.js";
import { fileSink } from "./file.js";
import { heartbeatSink } from "./heartbeat.js";
import { pagerdutySink } from "./pagerduty.js";
import { slackSink } from "./slack.js";
import { teamsSink } from "./teams.js";
import { telegramSink } from "./telegram.js";
import { webhookSink } from "./webhook.js";

/**
 * Every sink type kaiawatch knows, in the order messages and the JSON Schema list them.
 * Adding a sink is a file beside this one (see define-sink.ts) and a line here: the config
 * schema, the config types, the checks, createSink, the previews and the secrets follow.
 */
export const SINK_DEFINITIONS = [slackSink, discordSink, telegramSink, emailSink, webhookSink, pagerdutySink, teamsSink, consoleSink, fileSink, heartbeatSink] as const;

type AnySinkDefinition = (typeof SINK_DEFINITIONS)[number];

export type SinkType = AnySinkDefinition["type"];
export const SINK_TYPES: readonly SinkType[] = SINK_DEFINITIONS.map((definition) => definition.type);

/** A sink's own options with its `type`: what createSink and the checks need (the delivery options may be absent). */
export type SinkOptions = AnySinkDefinition extends infer D ? (D extends SinkDefinition<infer Type, infer Options> ? { type: Type } & SinkOptionsOf<Options> : never) : never;

/** The entry under `sinks.NAME`, discriminated by `type`. */
export const sinkConfigSchema = z.discriminatedUnion(
  "type",
  // map() loses the non-empty tuple type that discriminatedUnion asks for; the list above is that tuple.
  SINK_DEFINITIONS.map((definition) => definition.schema) as unknown as [AnySinkDefinition["schema"], ...Array<AnySinkDefinition["schema"]>],
);

/** A sink of the loaded config: its entry with every default applied, and its name (the key under `sinks`). */
export type SinkConfig = z.output<typeof sinkConfigSchema> & { name: string };

/**
 * The definition of a type, seen with options of any sink: the caller passes options that
 * carry this same `type`, so the one unchecked step of the registry is here.
 */
export function sinkDefinitionOf(type: string): SinkDefinition<string, z.ZodObject> | undefined {
  return (SINK_DEFINITIONS as readonly SinkDefinition<string, z.ZodObject>[]).find((definition) => definition.type === type);
}

/** The last key of every path a sink declares secret (`url`, `pass`, `routing_key` …): what a config error must hide. */
export const SINK_SECRET_KEY_NAMES: ReadonlySet<string> = new Set(SINK_DEFINITIONS.flatMap((definition) => definition.secretKeys.map((path) => path.split(".").at(-1) ?? path)));
