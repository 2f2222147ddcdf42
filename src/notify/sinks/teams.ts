import { z } from "zod";
import type { Common } from "../../common/common.js";
import { httpUrl } from "../../common/value-schemas.js";
import type { Delivery, Sink } from "../sink.js";
import type { SinkConfigProblem } from "../errors.js";
import { escapeAdaptiveText as esc, truncateUnits } from "../escape.js";
import { DIGEST_SHOWN, alertTitle, alertView, digestHeadline, digestLine, isDigest, type AlertView } from "../alert-view.js";
import type { HttpSender } from "../http-sender.js";
import { checkUrl } from "../sink-checks.js";
import { defineSink } from "./define-sink.js";
import { createJsonPostSink } from "./json-post-sink.js";

const teamsOptions = z.strictObject({
  allow_private_network: z.boolean().optional().meta({ description: "Send to a link-local or cloud metadata address (169.254.0.0/16, fe80::/10, metadata.google.internal …), refused otherwise. Default false." }),
  /** The URL of a Teams Workflows flow "When a Teams webhook request is received": a secret (it carries the signature). */
  url: httpUrl.meta({ description: "Workflows webhook URL (Teams: Workflows → \"Post to a channel when a webhook request is received\"). Secret." }),
});

export type TeamsOptions = z.output<typeof teamsOptions>;

export const TEAMS_LIMITS = {
  /** Teams documents 28 KB for a webhook message (the whole JSON); larger ones fail inside the flow, after a 202. */
  bytes: 28_000,
  /** What kaiawatch aims for: messages somewhat under 28 KB have been refused in practice. */
  budgetBytes: 20_000,
  /** Buttons under a card (one per explorer link; Teams shows up to six). */
  actions: 6,
} as const;

export const ADAPTIVE_CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive";

export interface OpenUrlAction {
  type: "Action.OpenUrl";
  title: string;
  url: string;
}

/** A run of text: its text is never read as markdown (see escapeAdaptiveText). */
export interface TextRun {
  type: "TextRun";
  text: string;
  weight?: "Bolder";
  size?: "Small" | "Large";
  color?: "Attention" | "Good";
  isSubtle?: true;
  selectAction?: OpenUrlAction;
}

export interface RichTextBlock {
  type: "RichTextBlock";
  inlines: TextRun[];
}

export interface AdaptiveCard {
  $schema: "http://adaptivecards.io/schemas/adaptive-card.json";
  type: "AdaptiveCard";
  version: "1.4";
  msteams: { width: "Full" };
  body: RichTextBlock[];
  actions?: OpenUrlAction[];
}

export interface TeamsMessage {
  type: "message";
  attachments: [{ contentType: typeof ADAPTIVE_CARD_CONTENT_TYPE; contentUrl: null; content: AdaptiveCard }];
}

export function validateTeamsOptions(options: TeamsOptions): SinkConfigProblem[] {
  const problems: SinkConfigProblem[] = [];
  checkUrl(problems, "url", options.url, { allowLoopbackHttp: true, allowPrivateNetwork: options.allow_private_network });
  return problems;
}

const run = (text: string, style: Omit<TextRun, "type" | "text"> = {}): TextRun => ({ type: "TextRun", text, ...style });
const line = (...inlines: TextRun[]): RichTextBlock => ({ type: "RichTextBlock", inlines });

function message(body: RichTextBlock[], actions: OpenUrlAction[]): TeamsMessage {
  const content: AdaptiveCard = { $schema: "http://adaptivecards.io/schemas/adaptive-card.json", type: "AdaptiveCard", version: "1.4", msteams: { width: "Full" }, body };
  if (actions.length > 0) content.actions = actions.slice(0, TEAMS_LIMITS.actions);
  return { type: "message", attachments: [{ contentType: ADAPTIVE_CARD_CONTENT_TYPE, contentUrl: null, content }] };
}

export function messageBytes(teamsMessage: TeamsMessage): number {
  return Buffer.byteLength(JSON.stringify(teamsMessage));
}

/** Red while an incident fires, green once resolved; the default colour for a one-shot alert. */
function titleRun(text: string, status: AlertView["status"]): TextRun {
  const style: Omit<TextRun, "type" | "text"> = { weight: "Bolder", size: "Large" };
  if (status !== undefined) style.color = status === "resolved" ? "Good" : "Attention";
  return run(truncateUnits(esc(text), 300), style);
}

/**
 * The card with the first `shown` of `items`, and a note of how many were left out; the most
 * items whose message fits the byte budget (non-ASCII text can triple in UTF-8).
 */
function fitted(count: number, build: (shown: number) => TeamsMessage): TeamsMessage {
  let built = build(count);
  for (let shown = count - 1; shown >= 0 && messageBytes(built) > TEAMS_LIMITS.budgetBytes; shown--) built = build(shown);
  return built;
}

/** The Workflows webhook payload of a delivery: pure, so that its escaping and limits are testable. */
export function buildTeamsMessage(delivery: Delivery): TeamsMessage {
  if (!isDigest(delivery)) {
    const alert = delivery.alerts[0]!;
    const view = alertView(alert);
    const fields = view.fields.map((f) => line(run(`${esc(f.label)}: `, { weight: "Bolder" }), run(esc(f.value))));
    const footer = line(run(esc([alert.watch, alert.source, alert.network, view.datetime].filter((x) => x != null).join(" · ")), { isSubtle: true, size: "Small" }));
    const actions = view.links.map((l): OpenUrlAction => ({ type: "Action.OpenUrl", title: l.label, url: l.url }));
    return fitted(fields.length, (shown) => {
      const body = [line(titleRun(alertTitle(view), view.status))];
      if (view.summary !== "") body.push(line(run(esc(view.summary))));
      body.push(...fields.slice(0, shown));
      if (shown < fields.length) body.push(line(run(`(${fields.length - shown} more fields not shown)`, { isSubtle: true })));
      body.push(footer);
      return message(body, actions);
    });
  }
  const alerts = delivery.alerts.slice(0, DIGEST_SHOWN);
  const lines = alerts.map((alert) => {
    const digest = digestLine(alert);
    const inlines = [run(`• ${esc(digest.text)}`)];
    if (digest.url !== undefined) inlines.push(run(" tx", { selectAction: { type: "Action.OpenUrl", title: "Transaction", url: digest.url } }));
    return line(...inlines);
  });
  return fitted(lines.length, (shown) => {
    const body = [line(titleRun(`🔔 ${delivery.rule}`, undefined)), line(run(esc(digestHeadline(delivery, shown)), { weight: "Bolder" })), ...lines.slice(0, shown)];
    return message(body, []);
  });
}

export function createTeamsSink(common: Common, name: string, options: TeamsOptions, sender?: HttpSender): Sink {
  const problems = validateTeamsOptions(options);
  return createJsonPostSink(common, { name, type: "teams", problems, url: options.url, secret: options.url, documents: (delivery) => [buildTeamsMessage(delivery)] }, sender);
}

/** The card as text for `kaiawatch replay`: one line per block, then the buttons. */
function teamsPreview(delivery: Delivery): string {
  const card = buildTeamsMessage(delivery).attachments[0].content;
  const blocks = card.body.map((block) => block.inlines.map((inline) => inline.text).join(""));
  const buttons = (card.actions ?? []).map((action) => `[${action.title}] ${action.url}`);
  return [...blocks, ...buttons].join("\n");
}

export const teamsSink = defineSink({
  type: "teams",
  options: teamsOptions,
  // Teams throttles a webhook above four requests a second; a channel reads better slower.
  defaultRatePerSecond: 1,
  check: validateTeamsOptions,
  create: createTeamsSink,
  preview: (delivery) => teamsPreview(delivery),
  secretKeys: ["url"],
});
