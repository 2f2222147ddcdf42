/** Longest pattern a rule may use: long patterns are where slow ones hide. */
export const MAX_PATTERN_LENGTH = 256;

/** Flags a rule may use. `g` and `y` are refused: they make RegExp.test stateful. */
const ALLOWED_FLAGS = /^[imsu]*$/;

export type PatternResult = { ok: true; regexp: RegExp } | { ok: false; message: string };

/**
 * Compiles a `matches` pattern from a rule, refusing the shapes that make a backtracking
 * engine take exponential time on hostile on-chain text (a revert message is written by
 * whoever deployed the contract). Written as `pattern` or `/pattern/flags` (flags from
 * i, m, s, u). Refused: more than 256 characters; a repeated group that itself contains a
 * repetition, e.g. `(a+)+`, `(\w*\s?)*`, `(x{2,})+`; backreferences (`\1`, `\k<name>`).
 * This cheap check cannot catch every slow pattern (overlapping alternatives such as
 * `(a|a)*` pass), which is why the length is bounded too.
 */
export function compileSafePattern(text: string): PatternResult {
  if (text.length > MAX_PATTERN_LENGTH) {
    return { ok: false, message: `the pattern is ${text.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed` };
  }
  let source = text;
  let flags = "";
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(text);
  if (literal) {
    source = literal[1] as string;
    flags = literal[2] as string;
    if (!ALLOWED_FLAGS.test(flags)) return { ok: false, message: `flags "${flags}": only i, m, s and u are allowed` };
  }
  const problem = findSlowShape(source);
  if (problem) return { ok: false, message: problem };
  try {
    return { ok: true, regexp: new RegExp(source, flags) };
  } catch (error) {
    return { ok: false, message: `not a valid regular expression: ${(error as Error).message}` };
  }
}

interface Group {
  hasRepetition: boolean;
}

function findSlowShape(p: string): string | undefined {
  const stack: Group[] = [{ hasRepetition: false }];
  let closed: Group | undefined; // the group that just closed, if the previous atom was one
  let inClass = false;
  for (let i = 0; i < p.length; ) {
    const c = p[i] as string;
    if (c === "\\") {
      const next = p[i + 1] ?? "";
      if (!inClass && (/[1-9]/.test(next) || (next === "k" && p[i + 2] === "<"))) {
        return "backreferences are not allowed (they can take exponential time)";
      }
      i += 2;
      closed = undefined;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      i++;
      continue;
    }
    if (c === "[") {
      inClass = true;
      closed = undefined;
      i++;
      // A "]" right after "[" or "[^" is a literal in other dialects; in JS it ends an empty class.
      continue;
    }
    if (c === "(") {
      stack.push({ hasRepetition: false });
      closed = undefined;
      i++;
      continue;
    }
    if (c === ")") {
      const group = stack.pop();
      if (!group || stack.length === 0) return undefined; // unbalanced: RegExp will report it
      const parent = stack[stack.length - 1] as Group;
      parent.hasRepetition ||= group.hasRepetition;
      closed = group;
      i++;
      continue;
    }
    const quantifier = readQuantifier(p, i);
    if (quantifier) {
      if (quantifier.repeats) {
        if (closed?.hasRepetition) {
          return `"${p.slice(0, i + quantifier.length)}…": a repeated group that contains a repetition can take exponential time; rewrite it without nesting`;
        }
        (stack[stack.length - 1] as Group).hasRepetition = true;
      }
      closed = undefined;
      i += quantifier.length;
      if (p[i] === "?") i++; // lazy form
      continue;
    }
    closed = undefined;
    i++;
  }
  return undefined;
}

/** A quantifier at position i: its length and whether it allows more than one repetition. */
function readQuantifier(p: string, i: number): { length: number; repeats: boolean } | undefined {
  const c = p[i];
  if (c === "*" || c === "+") return { length: 1, repeats: true };
  if (c === "?") return { length: 1, repeats: false };
  if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
    if (!m) return undefined;
    const max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3]);
    return { length: m[0].length, repeats: max > 1 };
  }
  return undefined;
}
