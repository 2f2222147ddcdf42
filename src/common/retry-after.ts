/**
 * `Retry-After` as milliseconds from `nowMs`, never negative: delta seconds ("120", "1.5")
 * or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // A date has a month name; a bare number that failed the test above is garbage, not a date.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
