import { toPlainDecimal } from "./exact-json.js";

/**
 * Helpers for the hand-written response checkers (response-checkers.ts). Checkers read
 * each field by name at the call site (`o.amount`, not `o[key]`) so V8 keeps every load
 * monomorphic: a page of 2,000 records costs a fraction of JSON.parse. Objects are checked
 * in place; unknown fields are kept as received; null optional fields are deleted, since
 * the API documents them as omitted.
 */
export type Rec = Record<string, unknown>;

/** A body whose field that kaiawatch reads is missing or malformed; `path` locates the field. */
export class ShapeError extends Error {
  override name = "ShapeError";
  readonly path: string[] = [];
  constructor(
    readonly problem: string,
    /** The offending value, described in a few characters (never the whole value). */
    readonly sample: string,
  ) {
    super(problem);
  }
  /** e.g. "results[3].amount". */
  get where(): string {
    return this.path.length ? this.path.join("").replace(/^\./, "") : "(body)";
  }
  /** The field without record positions, e.g. "results[].amount": the same for every record of a page. */
  get field(): string {
    return this.where.replace(/\[\d+\]/g, "[]");
  }
}

function fail(key: string, expected: string, value: unknown): never {
  const problem = value === undefined ? "required field is missing" : value === null ? "required field is null" : `expected ${expected}, got ${describe(value)}`;
  const error = new ShapeError(problem, sampleOf(value));
  if (key) error.path.push(`.${key}`);
  throw error;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return `a ${typeof value}`;
}

/** At most 40 characters of a value as JSON: enough to recognise it in an alert, too short to carry a page. */
function sampleOf(value: unknown): string {
  if (value === undefined) return "(missing)";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return `[…${value.length} items]`;
  if (typeof value === "object" && value !== null) return `{${Object.keys(value).slice(0, 4).join(",")}${Object.keys(value).length > 4 ? ",…" : ""}}`;
  return String(value).slice(0, 40);
}

export function object(value: unknown, key = ""): Rec {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(key, "an object", value);
  return value as Rec;
}

export function str(value: unknown, key: string): string {
  if (typeof value !== "string") fail(key, "a string", value);
  return value;
}

/** An integer JavaScript holds exactly: block numbers, positions, counts of pages. */
export function int(value: unknown, key: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) fail(key, "an integer", value);
  return value;
}

export function bool(value: unknown, key: string): boolean {
  if (typeof value !== "boolean") fail(key, "a boolean", value);
  return value;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const HEX = /^0x[0-9a-fA-F]*$/;

/** 0x and 40 hex digits, in any letter case (checksummed or not). */
export function address(value: unknown, key: string): string {
  if (typeof value !== "string" || !ADDRESS.test(value)) fail(key, "an address (0x + 40 hex)", value);
  return value;
}

/** 0x and 64 hex digits: a transaction hash or a topic. */
export function hash(value: unknown, key: string): string {
  if (typeof value !== "string" || !HASH.test(value)) fail(key, "a 32-byte hash (0x + 64 hex)", value);
  return value;
}

/** 0x and whole bytes of hex: a log's data. */
export function hexData(value: unknown, key: string): string {
  if (typeof value !== "string" || value.length % 2 !== 0 || !HEX.test(value)) fail(key, "hex data (0x + bytes)", value);
  return value;
}

/** A date-time the alert document carries as received: text that names an instant. */
export function dateTime(value: unknown, key: string): string {
  if (typeof value !== "string" || (!isPlainUtcDateTime(value) && Number.isNaN(Date.parse(value)))) fail(key, "an ISO-8601 date-time", value);
  return value;
}

/** Where "2025-03-02T01:04:06.000Z" has its digits. */
const DATE_TIME_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];
const twoDigits = (text: string, at: number) => (text.charCodeAt(at) - 0x30) * 10 + text.charCodeAt(at + 1) - 0x30;

/**
 * The form the explorer writes every date-time in, "2025-03-02T01:04:06.000Z", read by
 * its characters: Date.parse per record was a tenth of the response checks on a page of
 * 2,000 records. Only text that Date.parse accepts passes here (any four-digit year, month
 * 1-12, day 1-31, which is all V8's ISO reading checks, 00:00:00 to 23:59:59); anything
 * else, valid or not, is left to Date.parse, so what is accepted is unchanged.
 */
function isPlainUtcDateTime(text: string): boolean {
  if (text.length !== 24 || text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d || text.charCodeAt(10) !== 0x54 /* T */) return false;
  if (text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a || text.charCodeAt(19) !== 0x2e || text.charCodeAt(23) !== 0x5a /* Z */) return false;
  for (let i = 0; i < DATE_TIME_DIGITS.length; i++) {
    const c = text.charCodeAt(DATE_TIME_DIGITS[i] as number);
    if (c < 0x30 || c > 0x39) return false;
  }
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && twoDigits(text, 11) <= 23 && twoDigits(text, 14) <= 59 && twoDigits(text, 17) <= 59;
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

/** A token id: text as the API wrote it (decimal, or 0x-hex); a number becomes its exact decimal text. */
export function tokenId(value: unknown, key: string): string {
  if (typeof value === "string" && value !== "") return toPlainDecimal(value) ?? value;
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
