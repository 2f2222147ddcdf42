/**
 * A least-recently-used cache of enrichment answers, bounded both by the number of
 * entries and by their total size (measured as JSON characters when stored), so that a
 * long run over hostile data — 100 KB NFT names, huge call trees — cannot grow memory
 * without bound. Entries may carry an expiry: answers about the current state of the
 * chain (who holds a token) go stale, answers about a mined transaction never do.
 */
export interface EnrichmentCache {
  get(key: string): unknown;
  set(key: string, value: unknown, ttlMs?: number): void;
  readonly size: number;
  /** Approximate characters held. */
  readonly chars: number;
}

interface Entry {
  value: unknown;
  chars: number;
  expiresAt: number;
}

export function createEnrichmentCache(options: { maxEntries: number; maxChars: number; now: () => number }): EnrichmentCache {
  // A Map iterates in insertion order: re-inserting on every hit keeps the oldest use first.
  const entries = new Map<string, Entry>();
  let chars = 0;

  const remove = (key: string, entry: Entry) => {
    entries.delete(key);
    chars -= entry.chars;
  };

  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      remove(key, entry);
      if (entry.expiresAt <= options.now()) return undefined;
      entries.set(key, entry);
      chars += entry.chars;
      return entry.value;
    },
    set(key, value, ttlMs) {
      const old = entries.get(key);
      if (old !== undefined) remove(key, old);
      const size = key.length + (JSON.stringify(value)?.length ?? 0);
      // One answer larger than the whole cache is served once and not kept.
      if (size > options.maxChars) return;
      const entry: Entry = { value, chars: size, expiresAt: ttlMs === undefined ? Infinity : options.now() + ttlMs };
      entries.set(key, entry);
      chars += size;
      for (const [oldestKey, oldest] of entries) {
        if (entries.size <= options.maxEntries && chars <= options.maxChars) break;
        remove(oldestKey, oldest);
      }
    },
    get size() {
      return entries.size;
    },
    get chars() {
      return chars;
    },
  };
}
