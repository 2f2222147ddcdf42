/**
 * The entry of the process that parses a large config (see parse-in-child.ts). It parses the
 * one request it is sent, answers and exits; its memory, and the YAML library's garbage with
 * it, goes with the process.
 */
import { ConfigError } from "./errors.js";
import { parseConfigTextUncompiled } from "./load-config.js";
import { REPLY_PART_ITEMS, type ParseReply, type ParseRequest, type ReplyPart, type TextPart } from "./parse-in-child.js";

// The parent gone (killed, or its start-up abandoned), no one waits for the answer.
process.once("disconnect", () => process.exit(0));
// The text comes ahead of the request in parts (TEXT_PART_CHARS); messages arrive in the order sent.
const textParts: string[] = [];
process.on("message", (message) => {
  if (typeof message === "object" && message !== null && "textPart" in message) {
    textParts.push((message as TextPart).textPart);
    return;
  }
  const request = message as ParseRequest;
  const text = textParts.join("") + request.text;
  textParts.length = 0;
  let reply: ParseReply;
  try {
    const loaded = parseConfigTextUncompiled(text, { fileName: request.fileName, env: request.env, ...(request.maxBytes === undefined ? {} : { maxBytes: request.maxBytes }) });
    const { watches, rules } = loaded.config;
    // The watches and rules in parts first (see REPLY_PART_ITEMS); messages arrive in the order sent.
    const send = (part: ReplyPart["part"], items: readonly unknown[]) => {
      for (let i = 0; i < items.length; i += REPLY_PART_ITEMS) process.send?.({ part, items: items.slice(i, i + REPLY_PART_ITEMS) } satisfies ReplyPart);
    };
    send("watches", watches);
    send("rules", rules);
    reply = { ok: true, loaded: { ...loaded, config: { ...loaded.config, watches: [], rules: [] } } };
  } catch (error) {
    reply = error instanceof ConfigError ? { ok: false, issues: error.issues, secrets: [...error.secrets] } : { ok: false, crash: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  process.send?.(reply, () => process.exit(0));
});
