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
