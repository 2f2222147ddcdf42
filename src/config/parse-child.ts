/**
 * The entry of the process that parses a large config (see parse-in-child.ts). It parses the
 * one request it is sent, answers and exits; its memory, and the YAML library's garbage with
 * it, goes with the process.
 */
import { ConfigError } from "./errors.js";
import { parseConfigTextUncompiled } from "./load-config.js";
import type { ParseReply, ParseRequest } from "./parse-in-child.js";

// The parent gone (killed, or its start-up abandoned), no one waits for the answer.
process.once("disconnect", () => process.exit(0));
process.once("message", (message) => {
  const request = message as ParseRequest;
  let reply: ParseReply;
  try {
    reply = { ok: true, loaded: parseConfigTextUncompiled(request.text, { fileName: request.fileName, env: request.env }) };
  } catch (error) {
    reply = error instanceof ConfigError ? { ok: false, issues: error.issues, secrets: [...error.secrets] } : { ok: false, crash: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  process.send?.(reply, () => process.exit(0));
});
