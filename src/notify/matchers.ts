import { classicMatcher, classicMatchers } from "./matcher-classic-parser.js";
import { MatcherError, type Matcher } from "./matcher.js";
import { utf8Matchers } from "./matcher-utf8-parser.js";
import type { Labels } from "./labels.js";

export { MatcherError, type MatchType, type Matcher } from "./matcher.js";

/**
 * Reads one line of matchers as an Alertmanager config (or amtool) reads it: `severity="critical"`,
 * `{team="ops", severity=~"warn|crit"}` or `team=ops,severity!=info`, braces and commas optional,
 * a trailing comma allowed, `{}` and "" holding none. Alertmanager's default (fallback) mode
 * reads a line with both its parsers and keeps the classic one's matchers whenever that one
 * accepts the line, the UTF-8 one's (quoted and UTF-8 label names, `"service.name"="api"`,
 * Go's string escapes) when only that one does, and reports the classic one's message when
 * neither does. So does this: a config Alertmanager accepts means the same here. A regular expression is RE2's syntax (Go's),
 * anchored at both ends (`=~"warn"` does not match "warning"), matched in linear time by
 * re2js, with the limits rule patterns have (src/rules/safe-regexp.ts). Throws a MatcherError.
 */
export function parseMatchers(text: string): Matcher[] {
  const classic = attempt(() => classicMatchers(text));
  if (classic.ok) return classic.value;
  const utf8 = attempt(() => utf8Matchers(text));
  if (utf8.ok) return utf8.value;
  throw classic.error;
}

/** Exactly one matcher, as Alertmanager reads one (amtool's single arguments): no braces, no second matcher. */
export function parseMatcher(text: string): Matcher {
  if (text.startsWith("{") || text.endsWith("}")) throw new MatcherError(`unexpected open or close brace: ${text}`);
  const classic = attempt(() => classicMatcher(text));
  if (classic.ok) return classic.value;
  const utf8 = attempt(() => {
    const found = utf8Matchers(text);
    if (found.length === 0) throw new MatcherError("no matchers");
    if (found.length > 1) throw new MatcherError(`expected 1 matcher, found ${found.length}`);
    return found[0] as Matcher;
  });
  if (utf8.ok) return utf8.value;
  throw classic.error;
}

/** Every line of a config's `matchers:` list read by parseMatchers, as one list (a line may hold several). */
export function parseMatcherList(lines: readonly string[]): Matcher[] {
  return lines.flatMap(parseMatchers);
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

type Attempt<T> = { ok: true; value: T } | { ok: false; error: MatcherError };

function attempt<T>(parse: () => T): Attempt<T> {
  try {
    return { ok: true, value: parse() };
  } catch (error) {
    if (error instanceof MatcherError) return { ok: false, error };
    throw error;
  }
}

