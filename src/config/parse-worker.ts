/**
 * The entry of the thread that parses a large config (see parse-in-worker.ts). It answers
 * once and exits; its heap, and the YAML library's garbage with it, goes with the thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import { ConfigError } from "./errors.js";
import { parseConfigTextUncompiled } from "./load-config.js";
import type { ParseReply, ParseRequest } from "./parse-in-worker.js";

const request = workerData as ParseRequest;
let reply: ParseReply;
try {
  reply = { ok: true, loaded: parseConfigTextUncompiled(request.text, { fileName: request.fileName, env: request.env }) };
} catch (error) {
  reply = error instanceof ConfigError ? { ok: false, issues: error.issues, secrets: [...error.secrets] } : { ok: false, crash: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}
parentPort?.postMessage(reply);
