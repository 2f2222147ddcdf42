import { z } from "zod";
import type { Common } from "../../common/common.js";
import type { Delivery, Sink } from "../sink.js";
import { cleanLine } from "../../common/sanitize-text.js";
import { DIGEST_SHOWN, alertView, digestHeadline, digestLine, isDigest, statusPrefix } from "../alert-view.js";
import { defineSink, type SinkOptionsOf } from "./define-sink.js";

// The console sink has no options of its own; the stream is injectable for tests and embedding.
const consoleOptions = z.strictObject({});

export type ConsoleOptions = SinkOptionsOf<typeof consoleOptions>;

/**
 * Readable lines for a terminal or a container log. Every value is sanitized to one line,
 * so on-chain text cannot move the cursor, clear the screen (ANSI escapes are control
 * characters) or reorder what follows (bidi).
 */
export function formatConsole(delivery: Delivery): string {
  const lines: string[] = [];
  if (!isDigest(delivery)) {
    const alert = delivery.alerts[0]!;
    const view = alertView(alert);
    const where = [alert.watch, alert.source, alert.network, `block ${alert.block}`].map((x) => cleanLine(String(x), 100)).join(" · ");
    lines.push(`[kaiawatch] ${statusPrefix(view.status, view.repeat)}${view.rule} · ${where}`, `  ${view.summary}`);
    const tx = view.links.find((l) => l.label === "Transaction") ?? view.links[0];
    if (tx !== undefined) lines.push(`  ${tx.url}`);
  } else {
    const shown = delivery.alerts.slice(0, DIGEST_SHOWN);
    lines.push(`[kaiawatch] ${digestHeadline(delivery, shown.length)}`);
    for (const alert of shown) {
      const line = digestLine(alert);
      lines.push(`  - ${line.text}${line.url === undefined ? "" : `  ${line.url}`}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export function createConsoleSink(_common: Common, name: string, _options: ConsoleOptions = {}, stream: NodeJS.WritableStream = process.stdout): Sink {
  return {
    name,
    type: "console",
    async send(delivery, signal) {
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        stream.write(formatConsole(delivery), (error) => (error == null ? resolve() : reject(error)));
      });
    },
  };
}

export const consoleSink = defineSink({
  type: "console",
  options: consoleOptions,
  check: () => [],
  create: (common, name, options) => createConsoleSink(common, name, options),
  preview: (delivery) => formatConsole(delivery),
  secretKeys: [],
});
