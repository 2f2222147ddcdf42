import { Worker } from "node:worker_threads";
import { ConfigError, type LocatedConfigIssue } from "./errors.js";
import type { LoadedConfig } from "./load-config.js";

export interface ParseRequest {
  text: string;
  fileName: string;
  env: NodeJS.ProcessEnv;
}

export type ParseReply = { ok: true; loaded: Omit<LoadedConfig, "compiled"> } | { ok: false; issues: LocatedConfigIssue[]; secrets: string[] } | { ok: false; crash: string };

const WORKER = new URL("./parse-worker.js", import.meta.url);

/**
 * A thread starts from compiled JavaScript (dist/, what users run). Run from the TypeScript
 * source (vitest, tsx) there is no parse-worker.js beside this file, and no loader in the
 * thread to read the .ts one: the config is then parsed in the calling thread.
 */
export const CAN_PARSE_IN_WORKER = import.meta.url.endsWith(".js");

/**
 * Parses and validates config text in a thread of its own. The YAML library needs about a
 * hundred times the file's size in short-lived heap (190 MB for the 1.8 MB config of 10,000
 * sources), and V8 keeps a heap's high-water mark committed long after the garbage is
 * collected: parsed here, that memory is returned when the thread ends, and the daemon
 * starts at the size of what it keeps. The config is plain data, so it crosses intact.
 */
export function parseConfigInWorker(request: ParseRequest): Promise<Omit<LoadedConfig, "compiled">> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: request });
    let settled = false;
    worker.once("message", (reply: ParseReply) => {
      settled = true;
      if (reply.ok) resolve(reply.loaded);
      else if ("issues" in reply) reject(new ConfigError(request.fileName, reply.issues, reply.secrets));
      else reject(new Error(`the config parser failed: ${reply.crash}`));
    });
    worker.once("error", (error) => {
      settled = true;
      reject(error);
    });
    worker.once("exit", (code) => {
      if (!settled) reject(new Error(`the config parser's thread exited (code ${code}) without an answer`));
    });
  });
}
