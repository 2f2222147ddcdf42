import { truncateUnits } from "./escape.js";

/**
 * Fitting already-escaped text into a sink's limits. Lengths are UTF-16 code units, which
 * never undercount what Slack, Discord or Telegram count, and lines are kept whole so that
 * markup (an HTML tag, a Slack link) is never cut in half.
 */

/** Pack lines into chunks of at most `max` units; a single longer line is cut. */
export function packLines(lines: string[], max: number, maxChunks = Infinity): string[] {
  const chunks: string[] = [];
  let current = "";
  for (const raw of lines) {
    const line = truncateUnits(raw, max);
    if (current === "") current = line;
    else if (current.length + 1 + line.length <= max) current += `\n${line}`;
    else {
      chunks.push(current);
      current = line;
    }
  }
  if (current !== "") chunks.push(current);
  return chunks.slice(0, maxChunks);
}

/** Take whole lines while the joined text (with `reserve` units set aside) stays within `max`. */
export function takeLines(lines: string[], max: number, reserve = 0): string[] {
  const out: string[] = [];
  let used = reserve;
  for (const line of lines) {
    const cost = line.length + (out.length === 0 ? 0 : 1);
    if (used + cost > max) break;
    out.push(line);
    used += cost;
  }
  return out;
}
