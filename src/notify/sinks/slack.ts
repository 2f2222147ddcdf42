import { z } from "zod";
import type { Common } from "../../common/common.js";
import { httpUrl } from "../../common/value-schemas.js";
import type { Delivery, Sink } from "../sink.js";
import type { SinkConfigProblem } from "../errors.js";
import type { Template } from "../template.js";
import { templateContext } from "../template.js";
import { escapeSlack, truncateUnits } from "../escape.js";
import { DIGEST_SHOWN, alertTitle, alertView, digestHeadline, digestLine, isDigest, statusPrefix } from "../alert-view.js";
import { packLines } from "../fit.js";
import type { HttpSender } from "../http-sender.js";
import { checkTemplate, checkUrl } from "../sink-checks.js";
import { defineSink } from "./define-sink.js";
import { createJsonPostSink } from "./json-post-sink.js";

const slackOptions = z.strictObject({
  allow_private_network: z.boolean().optional().meta({ description: "Send to a link-local or cloud metadata address (169.254.0.0/16, fe80::/10, metadata.google.internal …), refused otherwise. Default false." }),
  /** The incoming webhook URL: a secret. */
  url: httpUrl.meta({ description: "Incoming-webhook URL. Secret." }),
  /** A template for the message text (mrkdwn); the built-in layout when absent. */
  text: z.string().optional(),
});

export type SlackOptions = z.output<typeof slackOptions>;

export const SLACK_LIMITS = { text: 40_000, section: 3000, blocks: 50, header: 150, fieldsPerSection: 10, field: 2000, contextElements: 10 } as const;

type Mrkdwn = { type: "mrkdwn"; text: string };
export type SlackBlock =
  | { type: "header"; text: { type: "plain_text"; text: string; emoji: true } }
  | { type: "section"; text: Mrkdwn }
  | { type: "section"; fields: Mrkdwn[] }
  | { type: "context"; elements: Mrkdwn[] };

export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
  unfurl_links: false;
  unfurl_media: false;
}

export function validateSlackOptions(options: SlackOptions): SinkConfigProblem[] {
  const problems: SinkConfigProblem[] = [];
  checkUrl(problems, "url", options.url, { allowLoopbackHttp: true, allowPrivateNetwork: options.allow_private_network });
  checkTemplate(problems, "text", options.text);
  return problems;
}

/** A link whose URL is ours (checked by safeUrl) and whose text is escaped. */
function link(url: string, text: string): string {
  return `<${url.replace(/&/g, "&amp;")}|${escapeSlack(text)}>`;
}

function header(text: string): SlackBlock {
  return { type: "header", text: { type: "plain_text", text: truncateUnits(escapeSlack(text), SLACK_LIMITS.header), emoji: true } };
}

function section(text: string): SlackBlock {
  return { type: "section", text: { type: "mrkdwn", text: truncateUnits(text, SLACK_LIMITS.section) } };
}

/** Links of a single alert and where it came from, as one context block. */
function contextBlock(delivery: Delivery): SlackBlock | undefined {
  const alert = delivery.alerts[0];
  if (alert === undefined || isDigest(delivery)) return undefined;
  const view = alertView(alert);
  const parts = view.links.map((l) => link(l.url, l.label));
  parts.push(escapeSlack([alert.watch, alert.source, alert.network, view.datetime].filter((x) => x != null).join(" · ")));
  return { type: "context", elements: [{ type: "mrkdwn", text: truncateUnits(parts.join(" · "), SLACK_LIMITS.section) }] };
}

/** The Block Kit message of a delivery: pure, so that its escaping and limits are testable. */
export function buildSlackMessage(delivery: Delivery, template?: Template): SlackMessage {
  const blocks: SlackBlock[] = [];
  let text: string;
  const context = contextBlock(delivery);
  const rendered = template?.render(templateContext(delivery), escapeSlack).trim();

  if (rendered !== undefined && rendered !== "") {
    text = rendered;
    for (const chunk of packLines(rendered.split("\n"), SLACK_LIMITS.section, SLACK_LIMITS.blocks - 1)) blocks.push(section(chunk));
  } else if (!isDigest(delivery)) {
    const view = alertView(delivery.alerts[0]!);
    text = `${statusPrefix(view.status, view.repeat)}${escapeSlack(view.rule)}: ${escapeSlack(view.summary)}`;
    blocks.push(header(alertTitle(view)));
    if (view.summary !== "") blocks.push(section(escapeSlack(view.summary)));
    const fields = view.fields.map((f) => ({ type: "mrkdwn" as const, text: truncateUnits(`*${escapeSlack(f.label)}*\n${escapeSlack(f.value)}`, SLACK_LIMITS.field) }));
    for (let i = 0; i < fields.length; i += SLACK_LIMITS.fieldsPerSection) blocks.push({ type: "section", fields: fields.slice(i, i + SLACK_LIMITS.fieldsPerSection) });
  } else {
    const shown = delivery.alerts.slice(0, DIGEST_SHOWN);
    const headline = digestHeadline(delivery, shown.length);
    text = escapeSlack(headline);
    blocks.push(header(`🔔 ${delivery.rule}`));
    blocks.push(section(`*${escapeSlack(headline)}*`));
    const lines = shown.map((alert) => {
      const line = digestLine(alert);
      return `• ${escapeSlack(line.text)}${line.url === undefined ? "" : ` ${link(line.url, "tx")}`}`;
    });
    for (const chunk of packLines(lines, SLACK_LIMITS.section, SLACK_LIMITS.blocks - 3)) blocks.push(section(chunk));
  }
  if (context !== undefined) blocks.push(context);
  return { text: truncateUnits(text, SLACK_LIMITS.text), blocks: blocks.slice(0, SLACK_LIMITS.blocks), unfurl_links: false, unfurl_media: false };
}

export function createSlackSink(common: Common, name: string, options: SlackOptions, sender?: HttpSender): Sink {
  const problems = validateSlackOptions(options);
  const template = checkTemplate([], "text", options.text);
  return createJsonPostSink(common, { name, type: "slack", problems, url: options.url, secret: options.url, documents: (delivery) => [buildSlackMessage(delivery, template)] }, sender);
}

/** A Block Kit block as Slack shows its text (mrkdwn left as is: that is what the receiver gets). */
function slackBlockText(block: SlackBlock): string {
  switch (block.type) {
    case "header":
      return `# ${block.text.text}`;
    case "section":
      return "text" in block ? block.text.text : block.fields.map((field) => field.text.replace("\n", ": ")).join("\n");
    case "context":
      return block.elements.map((element) => element.text).join(" ");
  }
}

export const slackSink = defineSink({
  type: "slack",
  options: slackOptions,
  defaultRatePerSecond: 1,
  check: validateSlackOptions,
  create: createSlackSink,
  preview(delivery, options) {
    const message = buildSlackMessage(delivery, checkTemplate([], "text", options.text));
    return [`text: ${message.text}`, ...message.blocks.map(slackBlockText)].join("\n");
  },
  secretKeys: ["url"],
});
