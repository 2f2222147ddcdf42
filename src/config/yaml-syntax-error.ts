import type { LineCounter, YAMLError } from "yaml";
import { secretsOfUrl } from "../common/url-secrets.js";
import { SECRET_KEYS } from "./document-secrets.js";

/**
 * The one YAML syntax error worth reporting: the parser goes on after a mistake and reports
 * every line after it again (a mis-indented key folds each following line into one more
 * nested key), and the tree it builds is a guess, so neither those errors nor key paths
 * read from that tree say anything true. What is left is the first error, at its line and
 * column, shown with that line.
 */
export function firstSyntaxError(errors: readonly YAMLError[], text: string, lineCounter: LineCounter): { offset: number; message: string; firstLine: number } {
  const sorted = [...errors].sort((a, b) => a.pos[0] - b.pos[0]);
  const first = sorted[0];
  if (first === undefined) throw new Error("firstSyntaxError needs an error");
  const start = first.pos[0];
  // `type: webhook` then ` url: …` one space deeper: YAML reads "webhook url" as a key of a
  // map nested in the value. The mistake is the deeper line, where that "key" ends.
  const folded = sorted.find((e) => e.code === "MULTILINE_IMPLICIT_KEY" && e.pos[0] === start);
  if (first.code === "BLOCK_AS_IMPLICIT_KEY" && folded !== undefined) {
    const above = lineCounter.linePos(start).line;
    const deeper = lineCounter.linePos(folded.pos[1]).line;
    if (deeper > above && indentOf(text, lineCounter, deeper) > indentOf(text, lineCounter, above)) {
      return {
        offset: firstNonBlank(text, lineStart(lineCounter, deeper)),
        message: `YAML syntax error: this line is indented more than the key on line ${above} above it, so YAML reads it as part of that key's value; keys of one map start in the same column`,
        // Both lines, so that the two indentations show.
        firstLine: above,
      };
    }
  }
  const hint = text.slice(Math.max(start - 1, 0), start + 1).includes("${") ? ' (inside { } or [ ], quote "${…}")' : "";
  // An indentation error points at the start of the line; the caret goes under its first character.
  const offset = /^[ \t]/.test(text.slice(start, start + 1)) ? firstNonBlank(text, start) : start;
  return { offset, message: `YAML syntax error: ${first.message.split("\n")[0] ?? ""}${hint}`, firstLine: lineCounter.linePos(offset).line };
}

/**
 * The lines from `firstLine` to the one of `offset`, and a caret under the column, as
 * printed under the error:
 *
 *     7 |     type: webhook
 *     8 |      url: [redacted]
 *       |      ^
 *
 * `redact` hides the secrets found in the document; a broken line may hold one the document
 * no longer shows under its key, so a secret key's value on a line is hidden here as well,
 * and every URL's secret parts.
 */
export function sourceExcerpt(text: string, offset: number, firstLine: number, lineCounter: LineCounter, redact: (text: string) => string): string {
  const { line, col } = lineCounter.linePos(offset);
  const width = String(line).length;
  const out: string[] = [];
  let shown = "";
  for (let n = Math.min(firstLine, line); n <= line; n++) {
    const from = lineStart(lineCounter, n);
    const end = text.indexOf("\n", from);
    shown = redact(redactLine(text.slice(from, end === -1 ? text.length : end).replace(/\r$/, ""))).replace(/\t/g, " ");
    out.push(`  ${String(n).padStart(width)} | ${shown}`);
  }
  out.push(`  ${" ".repeat(width)} | ${" ".repeat(Math.min(col - 1, shown.length))}^`);
  return out.join("\n");
}

/** `secret: whsec_…`, `{ url: "https://…", pass: x }`: the value of every secret key on the line. */
const PAIR = /([A-Za-z_]+)(\s*:[ \t]*)("[^"]*"?|'[^']*'?|[^,}\]#\s][^,}\]#]*)/g;

function redactLine(line: string): string {
  let out = line.replace(PAIR, (whole, key: string, colon: string) => (SECRET_KEYS.has(key.toLowerCase()) ? `${key}${colon}[redacted]` : whole));
  for (const word of out.split(/[\s"',{}[\]]+/)) for (const part of secretsOfUrl(word)) out = out.split(part).join("[redacted]");
  return out;
}

function lineStart(lineCounter: LineCounter, line: number): number {
  return lineCounter.lineStarts[line - 1] ?? 0;
}

function firstNonBlank(text: string, from: number): number {
  let at = from;
  while (text[at] === " " || text[at] === "\t") at++;
  return at;
}

function indentOf(text: string, lineCounter: LineCounter, line: number): number {
  const from = lineStart(lineCounter, line);
  return firstNonBlank(text, from) - from;
}
