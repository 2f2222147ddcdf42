import { RE2JS } from "re2js";
import { KaiawatchError } from "../common/errors.js";
import { MAX_PATTERN_LENGTH, MAX_PROGRAM_SIZE } from "../rules/safe-regexp.js";

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
  /** `name="value"`, `name=~"pattern"` (a name with a reserved character quoted): the form the parsers read back. */
  toString(): string;
}

/** A matcher that does not parse; the message is Alertmanager's, for a config error or a usage error. */
export class MatcherError extends KaiawatchError {
  override name = "MatcherError";
  constructor(message: string) {
    super("KW_MATCHER_INVALID", message);
  }
}

/** Builds a matcher (Alertmanager's NewMatcher): a regular expression is compiled here. */
export function newMatcher(type: MatchType, name: string, value: string): Matcher {
  const text = `${quoteName(name)}${type}"${escapeValue(value)}"`;
  if (type === "=" || type === "!=") {
    const equal = type === "=";
    return { name, type, value, test: (v) => (v === value) === equal, toString: () => text };
  }
  const re = compileAnchored(value);
  const positive = type === "=~";
  return { name, type, value, test: (v) => re.matches(v) === positive, toString: () => text };
}

/** Text JavaScript holds but UTF-8 cannot: a string from YAML is otherwise valid UTF-8. */
export const LONE_SURROGATE = /\p{Cs}/u;

/** Go's unicode.IsSpace (one character). */
export const SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
/** The characters Alertmanager's UTF-8 parser reserves: an unquoted name or value has none. */
export const RESERVED = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000{}!=~,\\"'`]/u;


/** A name with a character the UTF-8 parser reserves is written quoted, as Alertmanager writes it. */
function quoteName(name: string): string {
  return RESERVED.test(name) || name === "" ? JSON.stringify(name) : name;
}

/** OpenMetrics escaping: the three escapes both parsers read back. */
function escapeValue(value: string): string {
  return value.replace(/[\\\n"]/g, (char) => (char === "\n" ? "\\n" : `\\${char}`));
}

interface Anchored {
  matches(value: string): boolean;
}

function compileAnchored(pattern: string): Anchored {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new MatcherError(`${JSON.stringify(pattern.slice(0, 40))}…: the pattern is ${pattern.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`);
  let re: RE2JS;
  try {
    // Anchored as Alertmanager anchors it; the group keeps an alternation inside the anchors.
    // re2js words its errors as Go's regexp does, which is Alertmanager's message.
    re = RE2JS.compile(`^(?:${pattern})$`);
  } catch (error) {
    throw new MatcherError((error as Error).message);
  }
  const size = re.programSize();
  if (size > MAX_PROGRAM_SIZE) throw new MatcherError(`${JSON.stringify(pattern)}: the pattern compiles to ${size} instructions; at most ${MAX_PROGRAM_SIZE} are allowed`);
  return { matches: (value) => re.matches(value) };
}
