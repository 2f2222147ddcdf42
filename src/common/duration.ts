import { KaiawatchError } from "./errors.js";

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** One or more `<integer><unit>` parts: `500ms`, `30s`, `5m`, `2h`, `1d`, `1h30m`. */
export const DURATION_PATTERN = /^(?:\d+(?:ms|s|m|h|d))+$/;

/**
 * Milliseconds of a duration written as `500ms`, `30s`, `5m`, `2h`, `1d` or a sum such as
 * `1h30m`. Plain numbers are refused on purpose: "30" could mean seconds or milliseconds.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (!DURATION_PATTERN.test(trimmed)) {
    const hint = /^\d+(\.\d+)?$/.test(trimmed) ? ` (add a unit, e.g. "${trimmed}s" or "${trimmed}ms")` : "";
    throw new KaiawatchError("KW_CONFIG_DURATION", `not a duration: "${text}"${hint}; use ms, s, m, h or d, e.g. "30s", "5m", "1h30m"`);
  }
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)) {
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }
  if (!Number.isSafeInteger(total)) throw new KaiawatchError("KW_CONFIG_DURATION", `duration too large: "${text}"`);
  return total;
}

/** The shortest text parseDuration reads back as `ms`: 5400000 → "1h30m". */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  let rest = ms;
  let out = "";
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1000], ["ms", 1]] as const) {
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return out;
}
