import { readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { isAlias, isMap, isScalar, LineCounter, parseDocument, visit, type Document } from "yaml";
import { expandEnv } from "./env.js";
import { ConfigError, ConfigFileError, type ConfigIssue, type LocatedConfigIssue } from "./errors.js";
import { resolveConfig } from "./resolve-config.js";
import { configSchema } from "./schema.js";
import { secretsOfConfig } from "./secrets-of-config.js";
import { secretsOfDocument } from "./document-secrets.js";
import { MAX_CONFIG_DEPTH, tooDeepNode, tooDeepOffset } from "./document-depth.js";
import { createSecretRedactor } from "../common/secrets.js";
import { didYouMean } from "./suggest.js";
import type { Config } from "./types.js";
import { compileConfig, type CompiledConfig } from "./compile-config.js";
import { CAN_PARSE_IN_CHILD, parseConfigInChild } from "./parse-in-child.js";
import { formatPath, offsetOfPath, pathAtOffset, type ConfigPath } from "./yaml-locate.js";
import { createErrorMap } from "./zod-messages.js";
import { firstSyntaxError, sourceExcerpt } from "./yaml-syntax-error.js";

/** A check another subsystem adds (e.g. the rules compiler checking `when` per source). */
export type ConfigCheck = (config: Config) => ConfigIssue[];

export interface LoadedConfig {
  config: Config;
  /** What the runtime reads of it: conditions, schedules, routes (see compile-config.ts). */
  compiled: CompiledConfig;
  /** Every secret value in the config, to register with the log scrubber. */
  secrets: string[];
}

export interface ParseConfigOptions {
  /** Shown in messages; "config.yaml" when not given. */
  fileName?: string;
  /** Where `${VAR}` values come from; nothing is read from process.env implicitly. */
  env?: NodeJS.ProcessEnv;
  checks?: ConfigCheck[];
  /**
   * The longest text taken (default MAX_CONFIG_BYTES, the file limit). Benchmarks of more
   * watches than one file holds raise it; the YAML parser then needs ~100 bytes of heap per
   * byte of text.
   */
  maxBytes?: number;
}

export interface LoadConfigOptions {
  path: string;
  env: NodeJS.ProcessEnv;
  checks?: ConfigCheck[];
}

/**
 * Below this size parsing costs little memory (under ~30 MB at its peak) and the child's
 * own start (a Node.js process and its module loading) would cost more start-up time than it saves.
 */
const PARSE_IN_CHILD_FROM = 256 * 1024;

/**
 * The largest config file read. The YAML library needs about a hundred times a file's size
 * in heap while parsing, and a 44 MB file crashed it; the largest real configs (10,000
 * sources) are under 2 MB, so 8 MiB leaves room and refuses the rest before parsing.
 */
export const MAX_CONFIG_BYTES = 8 * 1024 * 1024;

const tooLargeMessage = (file: string, bytes: number) =>
  `config file ${file} is ${(bytes / 1024 / 1024).toFixed(1)} MiB; the limit is ${MAX_CONFIG_BYTES / 1024 / 1024} MiB (many addresses with the same rules fit in one accounts: or contracts: watch, docs/configuration.md; or split the watches over several kaiawatch instances)`;

/** Reads and validates a config file; rejects with ConfigFileError or ConfigError (with every problem). */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  let text: string;
  try {
    // Checked before reading, so that a huge file costs neither memory nor parsing.
    const { size } = statSync(options.path);
    if (size > MAX_CONFIG_BYTES) throw new ConfigFileError(options.path, tooLargeMessage(options.path, size), undefined, "KW_CONFIG_TOO_LARGE");
    text = readFileSync(options.path, "utf8");
  } catch (error) {
    if (error instanceof ConfigFileError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? `config file not found: ${options.path} (start from config.example.yaml, or pass --config PATH)`
        : code === "EISDIR"
          ? `config file is a directory: ${options.path}`
          : `cannot read config file ${options.path}: ${code ?? (error as Error).message}`;
    throw new ConfigFileError(options.path, reason, error);
  }
  const parseOptions = { fileName: options.path, env: options.env, checks: options.checks };
  if (!CAN_PARSE_IN_CHILD || text.length < PARSE_IN_CHILD_FROM) return parseConfigText(text, parseOptions);
  const loaded = await parseConfigInChild({ text, fileName: options.path, env: options.env });
  // The compile and the caller's checks are functions, or make them, which cannot cross to
  // the child: they run here. Only when one finds a problem is the text parsed again in this
  // process, to give it a line.
  const { compiled, issues } = compileConfig(loaded.config);
  const checks = options.checks ?? [];
  if (issues.length > 0 || checks.some((check) => check(loaded.config).length > 0)) return parseConfigText(text, parseOptions);
  return { ...loaded, compiled };
}

interface PendingIssue {
  path: ConfigPath;
  message: string;
  /** Report at the key (unknown keys) rather than at the value. */
  atKey?: boolean;
  /** A known offset (YAML and ${VAR} problems), else found from the path. */
  offset?: number;
  /** Show the lines from this one to that of `offset` under the message (a YAML syntax error, which has no key path). */
  excerptFrom?: number;
}

const startsWith = (path: ConfigPath, prefix: ConfigPath) => prefix.length <= path.length && prefix.every((s, i) => s === path[i]);

function setIn(root: unknown, path: ConfigPath, value: unknown): void {
  let node = root as Record<string | number, unknown> | undefined;
  for (const segment of path.slice(0, -1)) node = node?.[segment] as Record<string | number, unknown> | undefined;
  const last = path[path.length - 1];
  if (node && last !== undefined) node[last] = value;
}

function getIn(root: unknown, path: ConfigPath): unknown {
  let node = root;
  for (const segment of path) node = (node as Record<string | number, unknown> | null | undefined)?.[segment];
  return node;
}

/**
 * Substitutes `${VAR}` in every string value after parsing (keys are left alone), so that
 * positions stay those of the file. Returns the problems and the paths of the values
 * substituted: where the schema wants a number, "587" from the environment is meant as one.
 */
function substituteEnv(doc: Document, text: string, env: NodeJS.ProcessEnv) {
  const problems: PendingIssue[] = [];
  const substituted: ConfigPath[] = [];
  visit(doc, {
    Scalar(key, node) {
      if (key === "key" || typeof node.value !== "string" || !node.value.includes("$")) return;
      const { value, problems: found } = expandEnv(node.value, env);
      const start = node.range?.[0] ?? 0;
      const path = pathAtOffset(doc, start);
      for (const problem of found) {
        // Point at the reference itself when the source text shows it verbatim.
        const reference = /^\$\{[^}]*\}?/.exec(node.value.slice(problem.index))?.[0] ?? "${";
        const inSource = text.slice(start, node.range?.[1] ?? start).indexOf(reference);
        problems.push({ path, message: problem.message, offset: inSource === -1 ? start : start + inSource });
      }
      if (value !== node.value) {
        node.value = value;
        substituted.push(path);
      }
    },
  });
  return { problems, substituted };
}

/** `${PORT}` that gave "587": the number the user meant, used only where a string was refused. */
function coerce(value: unknown): unknown {
  if (typeof value !== "string") return value;
  if (/^-?[0-9]+(\.[0-9]+)?$/.test(value)) return Number(value);
  if (value === "true" || value === "false") return value === "true";
  return value;
}

function validate(raw: unknown, knownKeys: Map<string, string[]>, errorMap: ReturnType<typeof createErrorMap>["map"]): PendingIssue[] {
  const result = configSchema.safeParse(raw, { error: errorMap });
  if (result.success) return [];
  const pending: PendingIssue[] = [];
  for (const issue of result.error.issues) {
    const path = issue.path.filter((s): s is string | number => typeof s !== "symbol");
    if (issue.code === "unrecognized_keys") {
      const known = knownKeys.get(JSON.stringify(path)) ?? [];
      for (const key of issue.keys) pending.push({ path: [...path, key], message: `unknown key${didYouMean(key, known)}`, atKey: true });
    } else if (issue.code === "invalid_key") {
      pending.push({ path, message: issue.message, atKey: true });
    } else {
      pending.push({ path, message: issue.message });
    }
  }
  return pending;
}

const UNREADABLE = Symbol("unreadable");

/**
 * The document as plain values. The YAML library throws on an alias whose anchor is not
 * defined before it and on an alias bomb (a ReferenceError), and on a merge key `<<` whose
 * value is not a map (an Error); all are mistakes in the file, so they become issues where
 * they are (found by fuzzing: `*watches` and `<<:` alone crashed the loader).
 */
function plainValue(doc: Document, pending: PendingIssue[]): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    if (!(error instanceof ReferenceError)) {
      if (!(error instanceof Error)) throw error;
      let found = false;
      visit(doc, {
        Pair(_key, pair) {
          // With merge on, the library reads the key `<<` as a Scalar whose value is a symbol; its source is what was written.
          if (!isScalar(pair.key) || pair.key.source !== "<<" || isMap(pair.value) || isAlias(pair.value)) return undefined;
          found = true;
          const offset = pair.key.range?.[0] ?? 0;
          pending.push({ path: pathAtOffset(doc, offset), message: "a merge key (<<) takes a map or an alias (*name) of one", offset });
          return undefined;
        },
      });
      if (!found) pending.push({ path: [], message: `the YAML cannot be read as values: ${error.message}`, offset: 0 });
      return UNREADABLE;
    }
    let found = false;
    visit(doc, {
      Alias(_key, node) {
        if (node.resolve(doc) !== undefined) return undefined;
        found = true;
        const offset = node.range?.[0] ?? 0;
        pending.push({ path: pathAtOffset(doc, offset), message: `the alias *${node.source} refers to no anchor &${node.source} defined before it`, offset });
        return undefined;
      },
    });
    if (!found) pending.push({ path: [], message: "too many aliases (*name) expand into too much data; write the values out", offset: 0 });
    return UNREADABLE;
  }
}

/**
 * Problems found after loading (the tokens' decimals and symbols, read by JSON-RPC: not a
 * token, an amount in a unit the token does not have) placed at their line and column of
 * the file, as the loader's own are, in one ConfigError. The file is read again: it was
 * valid when loaded, so every key path given is in it.
 */
export async function locateConfigIssues(path: string, issues: readonly ConfigIssue[]): Promise<ConfigError> {
  const text = await readFile(path, "utf8").catch(() => "");
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, merge: true });
  const located = issues.map((issue): LocatedConfigIssue => {
    const { line, col } = lineCounter.linePos(offsetOfPath(doc, issue.path));
    return { file: path, line, column: col, path: formatPath(issue.path), message: issue.message };
  });
  located.sort((a, b) => a.line - b.line || a.column - b.column);
  return new ConfigError(path, located);
}

/**
 * Validates config text: YAML syntax, `${VAR}` substitution, the schema, the checks that
 * span several keys, and the caller's `checks`. Every problem is reported in one
 * ConfigError, each with line, column and key path.
 */
export function parseConfigText(text: string, options: ParseConfigOptions = {}): LoadedConfig {
  const { compiled, ...loaded } = parseText(text, options, true);
  return { ...loaded, compiled: compiled as CompiledConfig };
}

/**
 * parseConfigText for the parser's child process: what it makes of the conditions are
 * closures, which cannot cross back, so the calling process compiles (loadConfig).
 */
export function parseConfigTextUncompiled(text: string, options: ParseConfigOptions = {}): Omit<LoadedConfig, "compiled"> {
  const { compiled: _unused, ...loaded } = parseText(text, options, false);
  return loaded;
}

function parseText(text: string, options: ParseConfigOptions, compile: boolean): Omit<LoadedConfig, "compiled"> & { compiled?: CompiledConfig } {
  const file = options.fileName ?? "config.yaml";
  // loadConfig refuses a large file before reading it; text given directly is held to the same limit.
  if (text.length > (options.maxBytes ?? MAX_CONFIG_BYTES)) {
    throw new ConfigError(file, [{ file, line: 1, column: 1, path: "", message: tooLargeMessage(file, Buffer.byteLength(text)) }]);
  }
  const nestedTooDeeply = `nested too deeply: maps and lists may nest at most ${MAX_CONFIG_DEPTH} levels`;
  const lineCounter = new LineCounter();
  const deepAt = tooDeepOffset(text);
  if (deepAt !== undefined) {
    // Not parsed at all: the parser would exhaust the stack or the heap on it.
    const before = text.slice(0, deepAt);
    const line = before.split("\n").length;
    throw new ConfigError(file, [{ file, line, column: deepAt - before.lastIndexOf("\n"), path: "", message: nestedTooDeeply }]);
  }
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  const pending: PendingIssue[] = [];
  // Found in the tree as written, whatever its shape: a broken file has no typed config to
  // ask, and its error report quotes keys and values (guarantee 6).
  const secrets = new Set(secretsOfDocument(doc, text));

  const fail = (): never => {
    const redactor = createSecretRedactor();
    for (const secret of secrets) redactor.add(secret);
    const located = pending.map((issue): LocatedConfigIssue => {
      const offset = issue.offset ?? offsetOfPath(doc, issue.path, issue.atKey === true);
      const { line, col } = lineCounter.linePos(offset);
      const at: LocatedConfigIssue = { file, line, column: col, path: redactor.redact(formatPath(issue.path)), message: redactor.redact(issue.message) };
      if (issue.excerptFrom !== undefined) at.excerpt = sourceExcerpt(text, offset, issue.excerptFrom, lineCounter, (part) => redactor.redact(part));
      return at;
    });
    const seen = new Set<string>();
    const unique = located.filter((issue) => {
      const key = `${issue.line}:${issue.column}:${issue.path}:${issue.message}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
    unique.sort((a, b) => a.line - b.line || a.column - b.column);
    throw new ConfigError(file, unique, [...secrets]);
  };

  // The parser recurses per level and reports running out of stack as a syntax error.
  const stackError = doc.errors.find((error) => /call stack/i.test(error.message));
  if (stackError !== undefined) {
    pending.push({ path: [], message: nestedTooDeeply, offset: stackError.pos[0] });
    fail();
  }
  const syntaxErrors = doc.errors.filter((error) => error.code !== "DUPLICATE_KEY");
  if (syntaxErrors.length > 0) {
    // After a syntax error the tree is a guess: no key path, duplicate key or schema message read from it.
    const { offset, message, firstLine } = firstSyntaxError(syntaxErrors, text, lineCounter);
    pending.push({ path: [], message, offset, excerptFrom: firstLine });
    fail();
  }
  for (const { pos: [offset] } of doc.errors) pending.push({ path: pathAtOffset(doc, offset), message: "duplicate key (a key may appear only once in a map)", offset });
  const deep = tooDeepNode(doc);
  if (deep) {
    pending.push({ path: [], message: nestedTooDeeply, offset: deep.range?.[0] ?? 0 });
    fail();
  }

  const env = substituteEnv(doc, text, options.env ?? {});
  pending.push(...env.problems);
  for (const secret of secretsOfDocument(doc, text)) secrets.add(secret);
  const raw = plainValue(doc, pending);
  if (raw === UNREADABLE) fail();
  if (raw === null || raw === undefined || (typeof raw === "object" && !Array.isArray(raw) && Object.keys(raw).length === 0)) {
    pending.push({ path: [], message: "the configuration is empty: it needs at least a `watches:` list", offset: 0 });
    fail();
  }

  const { map, knownKeys } = createErrorMap();
  let schemaIssues = validate(raw, knownKeys, map);
  const toCoerce = env.substituted.filter((path) => schemaIssues.some((issue) => startsWith(issue.path, path)));
  if (toCoerce.length > 0) {
    for (const path of toCoerce) setIn(raw, path, coerce(getIn(raw, path)));
    knownKeys.clear();
    schemaIssues = validate(raw, knownKeys, map);
  }
  // A value that could not be substituted is reported once, as such, not again by the schema.
  const envProblemPaths = env.problems.map((p) => p.path);
  pending.push(...schemaIssues.filter((issue) => !envProblemPaths.some((p) => startsWith(issue.path, p))));

  const resolved = resolveConfig(raw);
  pending.push(...resolved.issues.filter((issue) => !envProblemPaths.some((p) => startsWith(issue.path, p))));
  // The checks also see parts that are wrong elsewhere: what they find at a place already
  // reported (a webhook URL's scheme, say) would be the same mistake twice.
  const reported = pending.map((issue) => issue.path);
  // With no problem anywhere, the checkable config holds the very watches and rules of the
  // config (resolveConfig keeps each valid one in both lists): its compile is the config's.
  const { compiled, issues: compileIssues } = compile ? compileConfig(resolved.checkable) : { compiled: undefined, issues: [] };
  for (const found of [compileIssues, ...(options.checks ?? []).map((check) => check(resolved.checkable))]) {
    for (const issue of found) {
      const path = [...issue.path];
      const [section, index] = path;
      if (section === "watches" && typeof index === "number") path[1] = resolved.checkWatchIndex[index] ?? index;
      if (section === "rules" && typeof index === "number") path[1] = resolved.checkRuleIndex[index] ?? index;
      if (reported.some((at) => at.length > 1 && startsWith(path, at))) continue;
      pending.push({ path, message: issue.message });
    }
  }

  if (pending.length > 0) fail();
  return { config: resolved.config, secrets: secretsOfConfig(resolved.config), ...(compiled === undefined ? {} : { compiled }) };
}
