import { RE2JS } from "re2js";
import { KaiawatchError } from "../common/errors.js";
import { MAX_PATTERN_LENGTH, MAX_PROGRAM_SIZE } from "../rules/safe-regexp.js";
import type { Labels } from "./labels.js";

/** Alertmanager's four matcher operators. */
export type MatchType = "=" | "!=" | "=~" | "!~";

/** One label test, as Alertmanager writes it: `severity="critical"`, `team!=ops`, `watch=~"hot-.*"`. */
export interface Matcher {
  readonly name: string;
  readonly type: MatchType;
  /** The value or pattern, unquoted. */
  readonly value: string;
  /** Whether a label value passes (a missing label is tested as ""). */
  test(value: string): boolean;
  /** `name="value"`, `name=~"pattern"`: the form `parseMatcher` reads back. */
  toString(): string;
}

/** A matcher that does not parse; the message says why, for a config error or a usage error. */
export class MatcherError extends KaiawatchError {
  override name = "MatcherError";
  constructor(message: string) {
    super("KW_MATCHER_INVALID", message);
  }
}

// The operator that follows the name: the two-character ones first, so "=~" is not read as "=".
const MATCHER = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/s;

/**
 * Reads one matcher in Alertmanager's syntax: a label name, an operator (`=`, `!=`, `=~`,
 * `!~`) and a value, quoted with double quotes (JSON's escapes: `\"`, `\\`, `\n`) or bare.
 * A regular expression is RE2's syntax (as Alertmanager's, which is Go's), anchored at both
 * ends (`=~"warn"` does not match "warning"), and matched in linear time by re2js, with the
 * limits rule patterns have (src/rules/safe-regexp.ts). Throws a MatcherError.
 */
export function parseMatcher(text: string): Matcher {
  const match = MATCHER.exec(text);
  if (!match) {
    throw new MatcherError(`not a matcher: ${JSON.stringify(text)}; write name=value, name!=value, name=~regex or name!~regex (e.g. severity="critical")`);
  }
  const [, name, type, raw] = match as unknown as [string, string, MatchType, string];
  const value = unquote(raw, text);
  const quoted = `${name}${type}${JSON.stringify(value)}`;
  if (type === "=" || type === "!=") {
    const equal = type === "=";
    return { name, type, value, test: (v) => (v === value) === equal, toString: () => quoted };
  }
  const re = compileAnchored(value, text);
  const positive = type === "=~";
  return { name, type, value, test: (v) => re.matches(v) === positive, toString: () => quoted };
}

/** Each of `texts` read by parseMatcher. */
export function parseMatchers(texts: readonly string[]): Matcher[] {
  return texts.map(parseMatcher);
}

/**
 * Whether labels pass every matcher (an empty list passes everything). A label the alert
 * lacks is tested as the empty string, as in Alertmanager: `team=""` matches alerts without
 * a team, `team!=""` those with one, and `team=~".*"` every alert.
 */
export function matches(matchers: readonly Matcher[], labels: Labels): boolean {
  for (const matcher of matchers) if (!matcher.test(Object.hasOwn(labels, matcher.name) ? (labels[matcher.name] as string) : "")) return false;
  return true;
}

function unquote(raw: string, text: string): string {
  if (!raw.startsWith('"')) {
    if (raw.includes('"')) throw new MatcherError(`${JSON.stringify(text)}: a value with a double quote must be quoted whole ("…", with \\" inside)`);
    return raw;
  }
  if (raw.length < 2 || !raw.endsWith('"')) {
    throw new MatcherError(`${JSON.stringify(text)}: the quoted value does not end with a closing double quote`);
  }
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === "string") return value;
  } catch {
    // Reported below with the matcher's text.
  }
  throw new MatcherError(`${JSON.stringify(text)}: the quoted value is not a valid string (escapes are \\", \\\\, \\n, \\t, \\uXXXX)`);
}

interface Anchored {
  matches(value: string): boolean;
}

function compileAnchored(pattern: string, text: string): Anchored {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new MatcherError(`${JSON.stringify(text).slice(0, 60)}…: the pattern is ${pattern.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`);
  let re: RE2JS;
  try {
    // Anchored as Alertmanager anchors it; the group keeps an alternation inside the anchors.
    re = RE2JS.compile(`^(?:${pattern})$`);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
    throw new MatcherError(`${JSON.stringify(text)}: not a regular expression the linear-time engine (RE2) accepts: ${reason}`);
  }
  const size = re.programSize();
  if (size > MAX_PROGRAM_SIZE) throw new MatcherError(`${JSON.stringify(text)}: the pattern compiles to ${size} instructions; at most ${MAX_PROGRAM_SIZE} are allowed`);
  return { matches: (value) => re.matches(value) };
}
