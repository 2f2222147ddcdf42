export const ELLIPSIS = "…";

/**
 * Cut `s` to at most `maxCodePoints` code points, ending with "…" when cut. Works on code
 * points, so a surrogate pair is never split (half an emoji is not valid text).
 */
export function truncate(s: string, maxCodePoints: number): string {
  if (maxCodePoints <= 0) return "";
  // Fast path: UTF-16 length bounds the code point count from above.
  if (s.length <= maxCodePoints) return s;
  const points = Array.from(s);
  if (points.length <= maxCodePoints) return s;
  return points.slice(0, maxCodePoints - 1).join("") + ELLIPSIS;
}

/**
 * On-chain text on one line: line breaks, tabs and other control characters become
 * spaces, so a revert message cannot start a new line in a log, header or chat message.
 */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ");
}
