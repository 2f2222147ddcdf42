import type { CooldownStamp, SuppressedNote } from "./types.js";

/**
 * How the file store keeps cooldown stamps and suppression notes: one meta row each, so that
 * a delivery pass writes the few rows it changed, not a book of every sink's stamps. The
 * PostgreSQL store keeps them in tables of their own (postgres/schema.ts, version 2).
 */

/** Before these rows, the whole cooldown book was this one meta value (read once to upgrade it). */
export const LEGACY_COOLDOWN_META_KEY = "notify.cooldown";

const STAMP_PREFIX = "notify.cooldown/";
const NOTE_PREFIX = "notify.suppressed/";

/** A JSON array after the prefix: sink, rule and key may hold any character, the "/" too. */
export const stampMetaKey = (sink: string, rule: string, key: string): string => `${STAMP_PREFIX}${JSON.stringify([sink, rule, key])}`;
export const noteMetaKey = (entryId: string): string => `${NOTE_PREFIX}${entryId}`;

/** A meta key that is one of these rows (not copied as plain meta by `store migrate`). */
export const isCooldownRowKey = (key: string): boolean => key.startsWith(STAMP_PREFIX) || key.startsWith(NOTE_PREFIX);

export interface StampValue {
  at: number;
  entry?: string;
}

export function stampOfMeta(metaKey: string, value: unknown): CooldownStamp | undefined {
  if (!metaKey.startsWith(STAMP_PREFIX) || !isObject(value) || typeof value.at !== "number") return undefined;
  let parts: unknown;
  try {
    parts = JSON.parse(metaKey.slice(STAMP_PREFIX.length));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((part) => typeof part === "string")) return undefined;
  const [sink, rule, key] = parts as [string, string, string];
  return { sink, rule, key, at: value.at, ...(typeof value.entry === "string" ? { entryId: value.entry } : {}) };
}

export function noteOfMeta(value: unknown): SuppressedNote | undefined {
  if (!isObject(value) || typeof value.at !== "string") return undefined;
  return { at: value.at, reason: value.reason === "silence" ? "silence" : "cooldown" };
}

/** The entry id of a note's meta key, or undefined for any other key. */
export function noteEntryOfMetaKey(metaKey: string): string | undefined {
  return metaKey.startsWith(NOTE_PREFIX) ? metaKey.slice(NOTE_PREFIX.length) : undefined;
}

/**
 * The stamps and notes of the one-value book of earlier releases
 * (`{ last: sink → rule → key → ms, suppressed: entry id → note }`). Its `admitted` list is
 * not kept: the entry id on a stamp does its work now, and stamps of the old book have none
 * (an entry admitted just before the upgrade and not yet sent is held by its cooldown).
 */
export function rowsOfLegacyBook(value: unknown): { stamps: CooldownStamp[]; notes: Array<{ id: string } & SuppressedNote> } {
  const stamps: CooldownStamp[] = [];
  const notes: Array<{ id: string } & SuppressedNote> = [];
  if (!isObject(value)) return { stamps, notes };
  if (isObject(value.last)) {
    for (const [sink, byRule] of Object.entries(value.last)) {
      if (!isObject(byRule)) continue;
      for (const [rule, byKey] of Object.entries(byRule)) {
        if (!isObject(byKey)) continue;
        for (const [key, at] of Object.entries(byKey)) if (typeof at === "number") stamps.push({ sink, rule, key, at });
      }
    }
  }
  if (isObject(value.suppressed)) {
    for (const [id, note] of Object.entries(value.suppressed)) {
      const read = noteOfMeta(note);
      if (read !== undefined) notes.push({ id, ...read });
    }
  }
  return { stamps, notes };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
