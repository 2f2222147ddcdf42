import { KaiawatchError } from "../common/errors.js";

/**
 * A problem found by a check, at a key path of the config (`["watches", 1, "account"]`).
 * Other subsystems pass checks to loadConfig that return these; the path is mapped to the
 * line and column of config.yaml.
 */
export type ConfigIssue = { path: readonly (string | number)[]; message: string };

/** A problem as the user sees it. `path` is formatted: "watches[1].account". */
export interface LocatedConfigIssue {
  file: string;
  line: number;
  column: number;
  path: string;
  message: string;
  /** A YAML syntax error's place instead of a key path (none can be read from a broken tree): its line(s) as written, secrets hidden, and a caret under the column. */
  excerpt?: string;
}

export function formatIssue(issue: LocatedConfigIssue): string {
  const line = `${issue.file}:${issue.line}:${issue.column} ${issue.path === "" ? "" : `${issue.path}: `}${issue.message}`;
  return issue.excerpt === undefined ? line : `${line}\n${issue.excerpt}`;
}

/** Every problem of a config file at once (never just the first), each with its position. */
export class ConfigError extends KaiawatchError {
  override name = "ConfigError";
  readonly file: string;
  readonly issues: LocatedConfigIssue[];
  /**
   * The values under secret-bearing keys of the refused file (already redacted from the
   * issues): a daemon refusing a reload adds them to its scrubber, since the running
   * config's secrets are not the new file's. Not enumerable, so no log serializer prints them.
   */
  declare readonly secrets: readonly string[];

  constructor(file: string, issues: LocatedConfigIssue[], secrets: readonly string[] = []) {
    const count = issues.length === 1 ? "1 error" : `${issues.length} errors`;
    super("KW_CONFIG_INVALID", `${file}: ${count} in the configuration`, { details: issues.map(formatIssue).join("\n") });
    this.file = file;
    this.issues = issues;
    Object.defineProperty(this, "secrets", { value: secrets, enumerable: false });
  }

  /** One line per problem: `config.yaml:14:7 watches[1].account: not an address`. */
  format(): string {
    return this.issues.map(formatIssue).join("\n");
  }
}

/** The config file cannot be read at all (missing, a directory, no permission). */
export class ConfigFileError extends KaiawatchError {
  override name = "ConfigFileError";
  readonly file: string;

  /** `code`: KW_CONFIG_UNREADABLE, or KW_CONFIG_TOO_LARGE for a file over the size limit. */
  constructor(file: string, message: string, cause?: unknown, code = "KW_CONFIG_UNREADABLE") {
    super(code, message, { cause });
    this.file = file;
  }
}

/**
 * The text to show a user for a config failure, or undefined when `error` is something
 * else. Commands print it to stderr and exit 2.
 */
export function describeConfigFailure(error: unknown): string | undefined {
  if (error instanceof ConfigError) return `${error.message}:\n${error.format()}\n`;
  if (error instanceof ConfigFileError) return `${error.message}\n`;
  return undefined;
}
