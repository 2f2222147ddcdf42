import { toPlainDecimal } from "./exact-json.js";

/**
 * Tiny hand-written checkers for response bodies. They check in place and return the value
 * (a different one only for exact amounts), so a page of 2,000 records costs one walk and
 * no copies. Null fields are deleted: the API documents them as omitted.
 */
export type Checker<T> = (value: unknown) => T;

export class ShapeError extends Error {
  override name = "ShapeError";
  readonly path: string[] = [];
  get where(): string {
    return this.path.length ? this.path.join("").replace(/^\./, "") : "(body)";
  }
  constructor(readonly problem: string) {
    super(problem);
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

export const str: Checker<string> = (value) => {
  if (typeof value !== "string") throw new ShapeError(`expected a string, got ${describe(value)}`);
  return value;
};

export const int: Checker<number> = (value) => {
  if (typeof value !== "number" || !Number.isInteger(value)) throw new ShapeError(`expected an integer, got ${describe(value)}`);
  return value;
};

export const bool: Checker<boolean> = (value) => {
  if (typeof value !== "boolean") throw new ShapeError(`expected a boolean, got ${describe(value)}`);
  return value;
};

/**
 * An exact decimal amount as text. Numbers were turned into strings before parsing
 * (exact-json.ts); one that still arrives as a number slipped past that (an escaped key
 * name) and is exact only when it is a safe integer.
 */
export const decimal: Checker<string> = (value) => {
  if (typeof value === "string") {
    const plain = toPlainDecimal(value);
    if (plain === undefined) throw new ShapeError(`expected a decimal number, got ${JSON.stringify(value.slice(0, 40))}`);
    return plain;
  }
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  throw new ShapeError(`expected a decimal number, got ${describe(value)}`);
};

/** A token id: text as the API wrote it (a number becomes its exact decimal text). */
export const tokenId: Checker<string> = (value) => {
  if (typeof value === "string") return toPlainDecimal(value) ?? value;
  return decimal(value);
};

export function arrayOf<T>(item: Checker<T>): Checker<T[]> {
  return (value) => {
    if (!Array.isArray(value)) throw new ShapeError(`expected an array, got ${describe(value)}`);
    let i = 0;
    try {
      for (; i < value.length; i++) {
        const v: unknown = value[i];
        const r = item(v);
        if (r !== v) value[i] = r;
      }
    } catch (error) {
      if (error instanceof ShapeError) error.path.unshift(`[${i}]`);
      throw error;
    }
    return value as T[];
  };
}

type Fields = Record<string, Checker<unknown>>;

/** An object with required and optional fields; unknown fields are kept as received. */
export function object<T>(required: Fields, optional: Fields = {}): Checker<T> {
  const req = Object.entries(required);
  const opt = Object.entries(optional);
  return (value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ShapeError(`expected an object, got ${describe(value)}`);
    const o = value as Record<string, unknown>;
    let key = "";
    try {
      for (const [k, check] of req) {
        key = k;
        const v = o[k];
        if (v == null) throw new ShapeError(v === null ? "required field is null" : "required field is missing");
        const r = check(v);
        if (r !== v) o[k] = r;
      }
      for (const [k, check] of opt) {
        key = k;
        const v = o[k];
        if (v === undefined) continue;
        if (v === null) {
          delete o[k];
          continue;
        }
        const r = check(v);
        if (r !== v) o[k] = r;
      }
    } catch (error) {
      if (error instanceof ShapeError) error.path.unshift(`.${key}`);
      throw error;
    }
    return value as T;
  };
}

/** An object whose every value is an object (the list envelope's `property`). */
export const objectOfObjects: Checker<Record<string, Record<string, unknown>>> = (value) => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ShapeError(`expected an object, got ${describe(value)}`);
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      const error = new ShapeError(`expected an object, got ${describe(v)}`);
      error.path.push(`.${k}`);
      throw error;
    }
  }
  return value as Record<string, Record<string, unknown>>;
};
