import type { z } from "zod";
import type { Store } from "./types.js";

/**
 * One named value in the store's meta, with the schema of what it holds. Features read and
 * write their meta only through their slot (readMeta, writeMeta), never by a bare key and an
 * unchecked cast: a value that does not match the schema (written by another build, or by
 * hand) reads as absent, and the feature starts over, rather than failing later on a field
 * that is not there.
 */
export interface MetaSlot<T> {
  readonly key: string;
  readonly schema: z.ZodType<T>;
}

export function metaSlot<T>(key: string, schema: z.ZodType<T>): MetaSlot<T> {
  return { key, schema };
}

export async function readMeta<T>(store: Pick<Store, "getMeta">, slot: MetaSlot<T>): Promise<T | undefined> {
  const value = await store.getMeta(slot.key);
  if (value === undefined) return undefined;
  const parsed = slot.schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** Stores the value (a JSON copy); `undefined` removes it. */
export function writeMeta<T>(store: Pick<Store, "setMeta">, slot: MetaSlot<T>, value: T | undefined): Promise<void> {
  return store.setMeta(slot.key, value);
}
