import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ConfigError, type LocatedConfigIssue } from "./errors.js";
import type { LoadedConfig } from "./load-config.js";

export interface ParseRequest {
  text: string;
  fileName: string;
  env: NodeJS.ProcessEnv;
}

export type ParseReply = { ok: true; loaded: Omit<LoadedConfig, "compiled"> } | { ok: false; issues: LocatedConfigIssue[]; secrets: string[] } | { ok: false; crash: string };

const CHILD = fileURLToPath(new URL("./parse-child.js", import.meta.url));

/**
 * The child starts from compiled JavaScript (dist/, what users run). Run from the TypeScript
 * source (vitest, tsx) there is no parse-child.js beside this file, and no loader in the
 * child to read the .ts one: the config is then parsed in the calling process.
 */
export const CAN_PARSE_IN_CHILD = import.meta.url.endsWith(".js");

/**
 * Parses and validates config text in a process of its own. The YAML library needs about a
 * hundred times the file's size in short-lived heap (2 GB for the 23 MB file of 100,000
 * watches), and what a process has once held stays in it: V8 keeps its heap's high-water
 * mark committed, and the C library keeps freed memory in its arenas (a worker thread has
 * one of its own, which outlives the thread). Parsed in a child, that memory goes back to
 * the system when the child exits, and the daemon peaks near the size of what it keeps
 * (kaiawatch once at 20,000 watches: peak 490 -> 229 MB, resident 225 -> 207 MB, against a
 * worker thread). The config is plain data, so it crosses intact through the V8 serializer
 * (its strings copied one by one: shareEqualStrings).
 */
export function parseConfigInChild(request: ParseRequest): Promise<Omit<LoadedConfig, "compiled">> {
  return new Promise((resolve, reject) => {
    // No execArgv: the child needs no loader or inspector of the parent's, only to parse.
    const child = fork(CHILD, [], { execArgv: [], serialization: "advanced", stdio: ["ignore", "ignore", "inherit", "ipc"] });
    let settled = false;
    child.once("message", (message) => {
      settled = true;
      const reply = message as ParseReply;
      if (reply.ok) resolve({ ...reply.loaded, config: shareEqualStrings(reply.loaded.config) });
      else if ("issues" in reply) reject(new ConfigError(request.fileName, reply.issues, reply.secrets));
      else reject(new Error(`the config parser failed: ${reply.crash}`));
    });
    child.once("error", (error) => {
      if (settled) return;
      settled = true;
      reject(new Error(`the config parser's process did not start: ${error.message}`));
    });
    child.once("exit", (code, signal) => {
      if (!settled) reject(new Error(`the config parser's process exited (${signal ?? `code ${code}`}) without an answer`));
    });
    child.send(request);
  });
}

/** Strings longer than this are kept as they came: addresses, names and patterns are shorter, and a long text is rarely repeated. */
const SHARED_STRING_MAX = 128;

/**
 * The value with every repeated short string made one string. The V8 serializer copies each
 * string on its own, so a config of many watches came back holding a copy of its schedule,
 * its sink names, its event signatures and its defaults for every watch and rule: about
 * 0.3 KB a watch at 20,000 watches (kaiawatch once: 106.7 -> 100.7 MB of live heap).
 * Changes the value in place (the copy is this process's own) and returns it.
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
