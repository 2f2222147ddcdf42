import { truncate } from "../common/text.js";

/** Longest on-chain string kept in an enrichment (NFT names, metadata, revert messages). */
export const ENRICHMENT_TEXT_MAX = 500;
/** Most entries of a list kept in an enrichment (calls, logs, transfers, inventory). */
export const ENRICHMENT_LIST_MAX = 25;

const MAX_DEPTH = 8;

/**
 * A copy of an explorer answer small enough to live in every alert of the outbox: strings
 * are cut to ENRICHMENT_TEXT_MAX characters (ending in "…"), nesting stops at a sane depth.
 * Lists are cut by their callers, which also record how many there were.
 */
export function boundValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return truncate(value, ENRICHMENT_TEXT_MAX);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return "…";
  if (Array.isArray(value)) return value.slice(0, ENRICHMENT_LIST_MAX).map((item) => boundValue(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = boundValue(item, depth + 1);
  return out;
}
