import { toPlainDecimal } from "./exact-json.js";

/**
 * Helpers for the hand-written response checkers (response-checkers.ts). Checkers read
 * each field by name at the call site (`o.amount`, not `o[key]`) so V8 keeps every load
 * monomorphic: a page of 2,000 records costs a fraction of JSON.parse. Objects are checked
 * in place; unknown fields are kept as received; null optional fields are deleted, since
 * the API documents them as omitted.
 */
export type Rec = Record<string, unknown>;

/** A body that is not of the documented shape; `path` locates the field. */
export class ShapeError extends Error {
  override name = "ShapeError";
  readonly path: string[] = [];
  constructor(readonly problem: string) {
    super(problem);
  }
  /** e.g. "results[3].amount". */
  get where(): string {
    return this.path.length ? this.path.join("").replace(/^\./, "") : "(body)";
  }
}

function fail(key: string, expected: string, value: unknown): never {
  const problem = value === undefined ? "required field is missing" : value === null ? "required field is null" : `expected ${expected}, got ${describe(value)}`;
  const error = new ShapeError(problem);
  if (key) error.path.push(`.${key}`);
  throw error;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return `a ${typeof value}`;
}

export function object(value: unknown, key = ""): Rec {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(key, "an object", value);
  return value as Rec;
}

export function str(value: unknown, key: string): string {
  if (typeof value !== "string") fail(key, "a string", value);
  return value;
}

export function int(value: unknown, key: string): number {
  if (typeof value !== "number" || !Number.isInteger(value)) fail(key, "an integer", value);
  return value;
}

export function bool(value: unknown, key: string): boolean {
  if (typeof value !== "boolean") fail(key, "a boolean", value);
  return value;
}

/**
 * An exact decimal amount as text. Numbers were turned into strings before parsing
 * (exact-json.ts); one that still arrives as a number slipped past that (an escaped key
 * name) and is exact only when it is a safe integer.
 */
export function decimal(value: unknown, key: string): string {
  if (typeof value === "string") {
    const plain = toPlainDecimal(value);
    if (plain !== undefined) return plain;
  } else if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return fail(key, "a decimal number", value);
}

/** A token id: text as the API wrote it; a number becomes its exact decimal text. */
export function tokenId(value: unknown, key: string): string {
  if (typeof value === "string") return toPlainDecimal(value) ?? value;
  return decimal(value, key);
}

/** For an optional field: true when it holds a value; a null is deleted (treated as omitted). */
export function present(o: Rec, key: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (value === null) {
    delete o[key];
    return false;
  }
  return true;
}

/** Runs a nested checker, adding the field's name to the path of its errors. */
export function field<T>(key: string, value: unknown, check: (value: unknown) => T): T {
  try {
    return check(value);
  } catch (error) {
    if (error instanceof ShapeError) error.path.unshift(`.${key}`);
    throw error;
  }
}

/** An array whose items pass `check` (items replaced only when the check returns another value). */
export function array<T>(value: unknown, key: string, check: (value: unknown) => T): T[] {
  if (!Array.isArray(value)) fail(key, "an array", value);
  let i = 0;
  try {
    for (; i < value.length; i++) {
      const item: unknown = value[i];
      const checked = check(item);
      if (checked !== item) value[i] = checked;
    }
  } catch (error) {
    if (error instanceof ShapeError) error.path.unshift(`.${key}`, `[${i}]`);
    throw error;
  }
  return value as T[];
}

export function string(value: unknown): string {
  return str(value, "");
}

/** An object whose every value is an object (the list envelope's `property`). */
export function objectOfObjects(value: unknown): Record<string, Rec> {
  const o = object(value);
  for (const key of Object.keys(o)) object(o[key], key);
  return o as Record<string, Rec>;
}
