import type { Store } from "../store/types.js";

/** The store meta key of the cooldown book; `kaiawatch outbox` reads the suppression notes from it. */
export const COOLDOWN_META_KEY = "notify.cooldown";

interface CooldownData {
  /** sink → rule → cooldown key → when an alert of it was last let through (ms since the epoch). */
  last: Record<string, Record<string, Record<string, number>>>;
  /**
   * Single entries let through whose first attempt has no recorded result yet. Without this a
   * crash between letting an alert through and recording its send would, after the restart,
   * find the alert's own cooldown stamp and suppress it: an alert lost.
   */
  admitted: string[];
  /** Entries marked delivered without a send: entry id → when and why. */
  suppressed: Record<string, SuppressedNote>;
}

export type SuppressionReason = "cooldown" | "silence";

export interface SuppressedNote {
  at: string;
  reason: SuppressionReason;
}

export interface CooldownBook {
  /** True when an alert of this sink, rule and key was let through less than `cooldownMs` ago. */
  isActive(sink: string, rule: string, key: string, cooldownMs: number, now: number): boolean;
  isAdmitted(entryId: string): boolean;
  /** Starts the cooldown of these keys; `singleEntryIds` are single alerts let through. */
  admit(sink: string, rule: string, keys: Iterable<string>, singleEntryIds: readonly string[], now: number): void;
  /** The first attempt of these entries has a recorded result. */
  settle(entryIds: readonly string[]): void;
  noteSuppressed(entries: ReadonlyArray<{ id: string; reason: SuppressionReason }>, now: number): void;
  /** Forgets stamps older than `stampsBefore` and notes older than `notesBefore`. */
  prune(stampsBefore: number, notesBefore: number): void;
  /** Writes the book to the store meta if it changed; resolves when durable. */
  persist(): Promise<void>;
}

/**
 * The cooldown's memory, kept in the store meta so that a restart honours a running cooldown.
 * One book is shared by every sink's worker; each write stores the whole book, so concurrent
 * writers cannot lose each other's stamps.
 */
export async function loadCooldownBook(store: Store): Promise<CooldownBook> {
  const stored = await store.getMeta<Partial<CooldownData>>(COOLDOWN_META_KEY);
  const data: CooldownData = {
    last: isObject(stored?.last) ? (stored.last as CooldownData["last"]) : {},
    admitted: Array.isArray(stored?.admitted) ? stored.admitted.filter((id): id is string => typeof id === "string") : [],
    suppressed: readNotes(stored?.suppressed),
  };
  const admitted = new Set(data.admitted);
  let dirty = false;

  return {
    isActive(sink, rule, key, cooldownMs, now) {
      const at = data.last[sink]?.[rule]?.[key];
      return at !== undefined && now - at < cooldownMs;
    },
    isAdmitted: (entryId) => admitted.has(entryId),
    admit(sink, rule, keys, singleEntryIds, now) {
      const byRule = (data.last[sink] ??= {});
      const byKey = (byRule[rule] ??= {});
      for (const key of keys) byKey[key] = now;
      for (const id of singleEntryIds) admitted.add(id);
      dirty = true;
    },
    settle(entryIds) {
      for (const id of entryIds) if (admitted.delete(id)) dirty = true;
    },
    noteSuppressed(entries, now) {
      const at = new Date(now).toISOString();
      for (const { id, reason } of entries) data.suppressed[id] = { at, reason };
      if (entries.length > 0) dirty = true;
    },
    prune(stampsBefore, notesBefore) {
      for (const [sink, byRule] of Object.entries(data.last)) {
        for (const [rule, byKey] of Object.entries(byRule)) {
          for (const [key, at] of Object.entries(byKey)) {
            if (at < stampsBefore) {
              delete byKey[key];
              dirty = true;
            }
          }
          if (Object.keys(byKey).length === 0) delete byRule[rule];
        }
        if (Object.keys(byRule).length === 0) delete data.last[sink];
      }
      for (const [id, note] of Object.entries(data.suppressed)) {
        if (Date.parse(note.at) < notesBefore) {
          delete data.suppressed[id];
          dirty = true;
        }
      }
    },
    async persist() {
      if (!dirty) return;
      dirty = false;
      data.admitted = [...admitted];
      try {
        await store.setMeta(COOLDOWN_META_KEY, data);
      } catch (error) {
        dirty = true;
        throw error;
      }
    },
  };
}

/** Entry id → when and why it was suppressed (cooldown or silence), for `kaiawatch outbox`. */
export async function readSuppressedNotes(store: Store): Promise<Record<string, SuppressedNote>> {
  return readNotes((await store.getMeta<Partial<CooldownData>>(COOLDOWN_META_KEY))?.suppressed);
}

function readNotes(value: unknown): Record<string, SuppressedNote> {
  if (!isObject(value)) return {};
  const notes: Record<string, SuppressedNote> = {};
  for (const [id, note] of Object.entries(value)) {
    if (isObject(note) && typeof note.at === "string") notes[id] = { at: note.at, reason: note.reason === "silence" ? "silence" : "cooldown" };
  }
  return notes;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
