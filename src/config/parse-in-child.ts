import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ConfigError, type LocatedConfigIssue } from "./errors.js";
import type { LoadedConfig } from "./load-config.js";
import type { Config } from "./types.js";

export interface ParseRequest {
  text: string;
  fileName: string;
  env: NodeJS.ProcessEnv;
  /** ParseConfigOptions.maxBytes (benchmarks past the file limit). */
  maxBytes?: number;
}

/**
 * The child's messages: its watches and rules in parts (ReplyPart), then its answer, the
 * config without them on success. A part holds at most REPLY_PART_ITEMS of them.
 */
export type ParseReply = { ok: true; loaded: Omit<LoadedConfig, "compiled"> } | { ok: false; issues: LocatedConfigIssue[]; secrets: string[] } | { ok: false; crash: string };
export type ReplyPart = { part: "watches" | "rules"; items: unknown[] };
/**
 * The request's text goes ahead of it in parts of at most TEXT_PART_CHARS, for the reason the
 * reply comes in parts: sent whole, a 23 MB text was one buffer of its size (kaiawatch once at
 * 100,000 separate watches: 364-366 MB resident at exit with the text whole, 333-345 in parts).
 */
export type TextPart = { textPart: string };

/**
 * Watches or rules per message. One message of the whole config (20 MB at 100,000 watches) is
 * gathered and read in buffers of its size, and once the C library has returned a buffer that
 * large to the system it keeps buffers up to that size in its own heap, where freed memory
 * stays resident: kaiawatch once at 100,000 separate watches ended at 408 MB resident with
 * the config in one message, 385 MB in parts (the same live heap). A part of 250 is well under
 * 128 KiB, the size from which it hands buffers back.
 */
export const REPLY_PART_ITEMS = 250;
/** Characters of the config's text per message: at most 64 KiB as the serializer writes them (two bytes a character at most). */
export const TEXT_PART_CHARS = 32 * 1024;

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
 * (its strings and objects copied one by one: shareEqualValues).
 */
export function parseConfigInChild(request: ParseRequest, execArgv: readonly string[] = []): Promise<Omit<LoadedConfig, "compiled">> {
  return new Promise((resolve, reject) => {
    // None of the parent's execArgv: the child needs no loader or inspector of the parent's, only
    // to parse (a benchmark past the file limit gives it a larger heap).
    const child = fork(CHILD, [], { execArgv: [...execArgv], serialization: "advanced", stdio: ["ignore", "ignore", "inherit", "ipc"] });
    let settled = false;
    const parts: Record<ReplyPart["part"], unknown[]> = { watches: [], rules: [] };
    child.on("message", (message) => {
      if (settled) return;
      if (typeof message === "object" && message !== null && "part" in message) {
        const { part, items } = message as ReplyPart;
        for (const item of items) parts[part].push(item);
        return;
      }
      settled = true;
      const reply = message as ParseReply;
      if (reply.ok) resolve({ ...reply.loaded, config: shareEqualValues({ ...reply.loaded.config, watches: parts.watches, rules: parts.rules } as Config) });
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
    const { text, ...rest } = request;
    for (let i = 0; i < text.length; i += TEXT_PART_CHARS) child.send({ textPart: text.slice(i, i + TEXT_PART_CHARS) } satisfies TextPart);
    child.send({ ...rest, text: "" } satisfies ParseRequest);
  });
}

/**
 * Strings and subtrees whose text (as JSON) is longer than this are kept as they came:
 * addresses, names, patterns, a rule's `when` or `notify` are shorter, and a long text or a
 * whole watch is rarely repeated.
 */
const SHARED_VALUE_MAX = 128;

/**
 * The value with every repeated short string, and every repeated small array or plain object
 * (a `when`, a `notify` list, a watch's `events`, `labels`), made one. The V8 serializer
 * copies each string and object on its own, so a config of many watches came back holding a
 * copy of its schedule, its sink names, its event signatures, its defaults and its rules'
 * conditions for every watch and rule (kaiawatch once at 20,000 watches: 106.7 -> 100.7 MB of
 * live heap for the strings, then 83.1 -> 73 for the subtrees, with the rules sharing their
 * conditions). A loaded config is read, never changed, so equal parts may be one object.
 * Changes the value in place (the copy is this process's own) and returns it.
 */
export function shareEqualValues<T>(value: T): T {
  const seen = new Map<string, unknown>();
  const intern = (text: string, node: unknown): unknown => {
    const first = seen.get(text);
    if (first !== undefined) return first;
    seen.set(text, node);
    return node;
  };
  /** The node's shared instance and its text (a key: JSON, with NaN, Infinity and undefined told apart); the node itself and no text when it is not shared (too long, or not plain data). */
  const share = (node: unknown): { node: unknown; text: string | undefined } => {
    if (typeof node === "string") {
      if (node.length > SHARED_VALUE_MAX) return { node, text: undefined };
      const text = JSON.stringify(node);
      return { node: intern(text, node), text };
    }
    if (typeof node === "number") return { node, text: String(node) };
    if (typeof node === "boolean" || node === null) return { node, text: JSON.stringify(node) };
    if (node === undefined) return { node, text: "u" };
    if (typeof node !== "object") return { node, text: undefined };
    const array = Array.isArray(node);
    const container = node as Record<string | number, unknown>;
    const keys: Array<string | number> = array ? Array.from({ length: node.length }, (_, i) => i) : Object.keys(node);
    const parts: string[] = [];
    let length = 0;
    let shareable = array || Object.getPrototypeOf(node) === Object.prototype;
    for (const key of keys) {
      const child = share(container[key]);
      // Written even when equal: an equal string is not the same string (a string has no identity to compare).
      container[key] = child.node;
      if (!shareable) continue;
      const part = child.text === undefined ? undefined : array ? child.text : `${JSON.stringify(key)}:${child.text}`;
      length += (part?.length ?? 0) + 1;
      if (part === undefined || length > SHARED_VALUE_MAX) shareable = false;
      else parts.push(part);
    }
    if (!shareable) return { node, text: undefined };
    const text = array ? `[${parts.join(",")}]` : `{${parts.join(",")}}`;
    return { node: intern(text, node), text };
  };
  return share(value).node as T;
}
