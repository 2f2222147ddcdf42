import { z } from "zod";
import type { Common } from "../../common/common.js";
import { httpUrl } from "../../common/value-schemas.js";
import type { Delivery, Sink } from "../sink.js";
import type { SinkConfigProblem } from "../errors.js";
import { escapeDiscord, truncateUnits } from "../escape.js";
import { cleanLine } from "../../common/sanitize-text.js";
import { DIGEST_SHOWN, alertTitle, alertView, digestHeadline, digestLine, isDigest } from "../alert-view.js";
import { takeLines } from "../fit.js";
import type { HttpSender } from "../http-sender.js";
import { checkUrl } from "../sink-checks.js";
import { defineSink } from "./define-sink.js";
import { createJsonPostSink } from "./json-post-sink.js";

const discordOptions = z.strictObject({
  allow_private_network: z.boolean().optional().meta({ description: "Send to a link-local or cloud metadata address (169.254.0.0/16, fe80::/10, metadata.google.internal …), refused otherwise. Default false." }),
  /** The channel webhook URL: a secret. */
  url: httpUrl.meta({ description: "Discord webhook URL. Secret." }),
  // Accepted and documented, but the embed layout does not use it (yet).
  text: z.string().optional(),
});

export type DiscordOptions = z.output<typeof discordOptions>;

const STATUS_COLOURS = { firing: 0xe01e5a, resolved: 0x2eb67d } as const;

export const DISCORD_LIMITS = { content: 2000, title: 256, description: 4096, fields: 25, fieldName: 256, fieldValue: 1024, footer: 2048, embeds: 10, total: 6000 } as const;

export interface DiscordEmbed {
  title: string;
  description?: string;
  url?: string;
  /** The side bar: red while an incident fires, green once it is resolved; none for a one-shot alert. */
  color?: number;
  fields?: { name: string; value: string; inline: boolean }[];
  footer?: { text: string };
  timestamp?: string;
}

export interface DiscordMessage {
  embeds: DiscordEmbed[];
  /** Nothing in a kaiawatch message may ping anyone, whatever the text says. */
  allowed_mentions: { parse: [] };
}

export function validateDiscordOptions(options: DiscordOptions): SinkConfigProblem[] {
  const problems: SinkConfigProblem[] = [];
  checkUrl(problems, "url", options.url, { allowLoopbackHttp: true, allowPrivateNetwork: options.allow_private_network });
  return problems;
}

/** The characters Discord counts against the 6000 total of a message's embeds. */
export function embedSize(embed: DiscordEmbed): number {
  return embed.title.length + (embed.description?.length ?? 0) + (embed.footer?.text.length ?? 0) + (embed.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0);
}

function validTimestamp(datetime: string | null | undefined): string | undefined {
  return datetime != null && !Number.isNaN(Date.parse(datetime)) ? new Date(datetime).toISOString() : undefined;
}

/** The webhook payload of a delivery: pure, so that its escaping and limits are testable. */
export function buildDiscordMessage(delivery: Delivery): DiscordMessage {
  let title = truncateUnits(`🔔 ${escapeDiscord(cleanLine(delivery.rule, 200))}`, DISCORD_LIMITS.title);
  let embed: DiscordEmbed;
  if (!isDigest(delivery)) {
    const alert = delivery.alerts[0]!;
    const view = alertView(alert);
    title = truncateUnits(escapeDiscord(alertTitle(view)), DISCORD_LIMITS.title);
    const links = view.links.map((l) => `[${l.label}](${l.url})`).join(" · ");
    const description = truncateUnits([escapeDiscord(view.summary), links].filter((s) => s !== "").join("\n"), DISCORD_LIMITS.description);
    const footer = { text: truncateUnits([alert.watch, alert.source, alert.network].join(" · "), DISCORD_LIMITS.footer) };
    embed = { title, description, footer };
    if (view.status !== undefined) embed.color = STATUS_COLOURS[view.status];
    if (view.links[0] !== undefined) embed.url = view.links[0].url;
    const timestamp = validTimestamp(view.datetime);
    if (timestamp !== undefined) embed.timestamp = timestamp;
    const fields: NonNullable<DiscordEmbed["fields"]> = [];
    let size = embedSize(embed);
    for (const f of view.fields.slice(0, DISCORD_LIMITS.fields)) {
      const field = { name: truncateUnits(escapeDiscord(f.label), DISCORD_LIMITS.fieldName), value: truncateUnits(escapeDiscord(f.value), DISCORD_LIMITS.fieldValue), inline: f.value.length <= 48 };
      if (size + field.name.length + field.value.length > DISCORD_LIMITS.total) break;
      size += field.name.length + field.value.length;
      fields.push(field);
    }
    if (fields.length > 0) embed.fields = fields;
  } else {
    const lines = delivery.alerts.slice(0, DIGEST_SHOWN).map((alert) => {
      const line = digestLine(alert);
      return `• ${escapeDiscord(line.text)}${line.url === undefined ? "" : ` [tx](${line.url})`}`;
    });
    // Reserve the headline as it reads with every line shown (plus a margin for the count); whole lines fill the rest.
    const budget = Math.min(DISCORD_LIMITS.description, DISCORD_LIMITS.total - title.length);
    const headlineMax = Math.min(600, escapeDiscord(digestHeadline(delivery, lines.length)).length + 12);
    const shown = takeLines(lines, budget, headlineMax + 2);
    const headline = truncateUnits(`**${escapeDiscord(digestHeadline(delivery, shown.length))}**`, headlineMax);
    embed = { title, description: [headline, "", ...shown].join("\n") };
  }
  return { embeds: [embed], allowed_mentions: { parse: [] } };
}

export function createDiscordSink(common: Common, name: string, options: DiscordOptions, sender?: HttpSender): Sink {
  const problems = validateDiscordOptions(options);
  return createJsonPostSink(common, { name, type: "discord", problems, url: options.url, secret: options.url, documents: (delivery) => [buildDiscordMessage(delivery)] }, sender);
}

export const discordSink = defineSink({
  type: "discord",
  options: discordOptions,
  defaultRatePerSecond: 0.5,
  check: validateDiscordOptions,
  create: createDiscordSink,
  preview: (delivery) => JSON.stringify(buildDiscordMessage(delivery), null, 2),
  secretKeys: ["url"],
});
