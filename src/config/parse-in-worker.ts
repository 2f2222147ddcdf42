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
 * starts at the size of what it keeps. The config is plain data, so it crosses intact
 * (its strings copied one by one: shareEqualStrings).
 */
export function parseConfigInWorker(request: ParseRequest): Promise<Omit<LoadedConfig, "compiled">> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: request });
    let settled = false;
    worker.once("message", (reply: ParseReply) => {
      settled = true;
      if (reply.ok) resolve({ ...reply.loaded, config: shareEqualStrings(reply.loaded.config) });
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

/** Strings longer than this are kept as they came: addresses, names and patterns are shorter, and a long text is rarely repeated. */
const SHARED_STRING_MAX = 128;

/**
 * The value with every repeated short string made one string. A structured clone copies each
 * string on its own, so a config of many watches came back holding a copy of its schedule,
 * its sink names, its event signatures and its defaults for every watch and rule: about
 * 0.3 KB a watch at 20,000 watches (kaiawatch once: 106.7 -> 100.7 MB of live heap).
 * Changes the value in place (the clone is this thread's own) and returns it.
 */
export function shareEqualStrings<T>(value: T): T {
  const seen = new Map<string, string>();
  const share = (text: string): string => {
    if (text.length > SHARED_STRING_MAX) return text;
    const first = seen.get(text);
    if (first !== undefined) return first;
    seen.set(text, text);
    return text;
  };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === "string") node[i] = share(item);
        else visit(item);
      }
    } else if (typeof node === "object" && node !== null) {
      const record = node as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const item = record[key];
        if (typeof item === "string") record[key] = share(item);
        else visit(item);
      }
    }
  };
  visit(value);
  return value;
}
