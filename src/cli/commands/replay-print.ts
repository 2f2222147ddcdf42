import type { Config } from "../../config/index.js";
import { previewDelivery } from "../../notify/preview.js";
import type { ReplayMatch } from "../../watch/replay.js";
import type { CommandIO } from "../command.js";

/** Prints each match of `replay` as each of its rule's sinks would render it (--json: one object a match). */
export function matchPrinter(config: Config, json: boolean, io: CommandIO, out: (line: string) => void): (match: ReplayMatch) => void {
  let shown = 0;
  const print = (match: ReplayMatch) => {
    shown += 1;
    const delivery = { id: match.alert.id, rule: match.rule.name, alerts: [match.alert], attempt: 1 };
    const rendered: Record<string, string> = {};
    for (const name of match.rule.notify) {
      const sink = config.sinks[name];
      if (sink) rendered[name] = previewDelivery(sink, delivery);
    }
    if (json) {
      io.stdout.write(`${JSON.stringify({ type: "match", alert: match.alert, rendered })}\n`);
      return;
    }
    out("");
    out(`── match ${shown} · block ${match.alert.block} · ${match.alert.transaction_hash ?? "no transaction"} · alert ${match.alert.id}`);
    for (const [name, text] of Object.entries(rendered)) {
      out(`┌ ${name} (${config.sinks[name]?.type})`);
      for (const line of text.split("\n")) out(`│ ${line}`);
    }
  };
  return print;
}
