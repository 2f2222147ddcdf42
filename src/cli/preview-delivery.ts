import type { SinkConfig } from "../config/types.js";
import { sanitizeText } from "../common/sanitize-text.js";
import type { Delivery } from "../notify/sink.js";
import { formatConsole } from "../notify/sinks/console.js";
import { buildDiscordMessage } from "../notify/sinks/discord.js";
import { buildEmail } from "../notify/sinks/email.js";
import { buildSlackMessage, type SlackBlock } from "../notify/sinks/slack.js";
import { buildTelegramMessage } from "../notify/sinks/telegram.js";
import { buildWebhookBody } from "../notify/sinks/webhook.js";
import { compileTemplate, type Template } from "../notify/template.js";

/**
 * A delivery as its sink would send it, for a terminal (`kaiawatch replay`): built by the
 * sink's own payload builder with the sink's templates, then shown readably. The result is
 * sanitized once more because it goes to a terminal: on-chain text must not move the cursor,
 * recolour the screen or reorder what follows.
 */
export function previewDelivery(sink: SinkConfig, delivery: Delivery): string {
  return sanitizeText(render(sink, delivery)).replace(/\n+$/, "");
}

function render(sink: SinkConfig, delivery: Delivery): string {
  switch (sink.type) {
    case "slack": {
      const message = buildSlackMessage(delivery, template(sink.text));
      return [`text: ${message.text}`, ...message.blocks.map(slackBlockText)].join("\n");
    }
    case "discord":
      return JSON.stringify(buildDiscordMessage(delivery), null, 2);
    case "telegram":
      return buildTelegramMessage(delivery, sink.chat_id).text;
    case "email": {
      const email = buildEmail(delivery, { subject: template(sink.subject), body: template(sink.body) });
      return `Subject: ${email.subject}\n\n${email.text}`;
    }
    case "webhook":
      return JSON.stringify(JSON.parse(buildWebhookBody(delivery)), null, 2);
    case "console":
      return formatConsole(delivery);
    case "file":
      return delivery.alerts.map((alert) => JSON.stringify(alert)).join("\n");
  }
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

function template(source: string | undefined): Template | undefined {
  // The config checks compiled every template already: this cannot fail on a loaded config.
  return source === undefined ? undefined : compileTemplate(source);
}
