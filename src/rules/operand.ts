import { addressToTopic, hasValidChecksum, isAddress } from "../chain/address.js";
import { eventTopic, functionSelector, isSelector, isTopicHash, looksLikeSignature } from "../chain/signatures.js";
import { decimalTextOfNumber, parseAmount, parseInteger } from "../chain/units.js";
import type { FieldSpec } from "./fields.js";

/**
 * A value written in a rule, turned once (at load) into the form the field holds, so
 * that evaluation only compares:
 * - address, hash, keyword: lowercase string;  text: string;
 * - integer, amount: bigint;  boolean: boolean;  arg: ArgValue.
 */
export type Scalar = string | bigint | boolean | ArgValue;

/** An event-argument value: its text, and its integer / lowercase-hex readings when it has them. */
export interface ArgValue {
  text: string;
  int: bigint | undefined;
  hex: string | undefined;
}

export type OperandResult<T> = { ok: true; value: T } | { ok: false; message: string };

const fail = (message: string): { ok: false; message: string } => ({ ok: false, message });
// String() of a map says "[object Object]", and throws on one without a prototype (found by fuzzing).
const show = (raw: unknown): string =>
  typeof raw === "string" ? JSON.stringify(raw) : Array.isArray(raw) ? "a list" : typeof raw === "object" && raw !== null ? "a map" : String(raw);

const DECIMAL_INTEGER = /^-?\d+$/;
const HEX = /^0x[0-9a-fA-F]*$/;

/** The readings of an event argument's text; shared by rule values and record values. */
export function argValue(text: string): ArgValue {
  return {
    text,
    int: DECIMAL_INTEGER.test(text) ? BigInt(text) : undefined,
    hex: HEX.test(text) ? text.toLowerCase() : undefined,
  };
}

/** One value for `eq`, `ne`, `in`, `not_in` of a field. */
export function parseScalar(field: FieldSpec, raw: unknown): OperandResult<Scalar> {
  if (raw === null || raw === undefined) return fail(`a value is missing; to match a missing ${field.name} write { exists: false }`);
  if (typeof raw === "object") return fail(`expected a single value, got ${Array.isArray(raw) ? "a list" : "an object"}`);
  switch (field.kind) {
    case "address":
      if (!isAddress(raw)) return fail(`${show(raw)} is not an address (0x and 40 hex digits; quote it in YAML)`);
      if (!hasValidChecksum(raw)) return fail(`${show(raw)} has mixed letter case that fails its EIP-55 checksum: probably a typo`);
      return { ok: true, value: raw.toLowerCase() };
    case "hash":
      return parseHash(field, raw);
    case "keyword": {
      if (typeof raw !== "string" || raw.trim() === "") return fail(`${show(raw)} is not a word such as ${field.values?.join(", ") ?? "CALL"}`);
      const word = raw.trim().toLowerCase();
      if (field.values && !field.values.includes(word)) return fail(`${show(raw)} is not one of ${field.values.join(", ")}`);
      return { ok: true, value: word };
    }
    case "text":
      if (typeof raw !== "string") return fail(`${show(raw)} is not text (quote it)`);
      return { ok: true, value: raw };
    case "integer":
      return parseIntegerValue(raw);
    case "amount":
      return parseAmountValue(raw);
    case "boolean":
      if (typeof raw !== "boolean") return fail(`${show(raw)} is not true or false`);
      return { ok: true, value: raw };
    case "arg":
      if (typeof raw === "boolean") return { ok: true, value: argValue(String(raw)) };
      if (typeof raw === "number") {
        const text = decimalTextOfNumber(raw);
        if (text === undefined || !Number.isInteger(raw)) return fail(`${raw} is not a whole number that a YAML number can hold exactly; quote it`);
        return { ok: true, value: argValue(text) };
      }
      if (typeof raw !== "string") return fail(`${show(raw)} is not a value`);
      return { ok: true, value: argFromRule(raw) };
    default:
      return fail("unsupported field");
  }
}

/** An argument value a person wrote: integer notations ("10^18", "1_000") read as integers. */
function argFromRule(raw: string): ArgValue {
  const value = argValue(raw);
  if (value.int === undefined && /^[\d\s_.^*×eE+-]+$/.test(raw)) {
    try {
      value.int = parseInteger(raw);
    } catch {
      // Not an integer after all: compared as text.
    }
  }
  return value;
}

/** The bound of `gt`, `gte`, `lt`, `lte`. */
export function parseBound(field: FieldSpec, raw: unknown): OperandResult<bigint> {
  if (field.kind === "amount") return parseAmountValue(raw);
  if (field.kind === "integer") return parseIntegerValue(raw);
  const value = parseScalar(field, raw);
  if (!value.ok) return value;
  const int = (value.value as ArgValue).int;
  if (int === undefined) return fail(`${show(raw)} is not a whole number; ${field.name} compares as an integer in base units (e.g. "1000 * 10^18")`);
  return { ok: true, value: int };
}

function parseIntegerValue(raw: unknown): OperandResult<bigint> {
  if (typeof raw === "number") {
    if (!Number.isSafeInteger(raw)) return fail(`${raw} is not a whole number a YAML number can hold exactly; quote it ("${raw}")`);
    return { ok: true, value: BigInt(raw) };
  }
  if (typeof raw !== "string") return fail(`${show(raw)} is not a whole number`);
  try {
    return { ok: true, value: parseInteger(raw) };
  } catch (error) {
    return fail((error as Error).message);
  }
}

function parseAmountValue(raw: unknown): OperandResult<bigint> {
  let text: string;
  if (typeof raw === "number") {
    const decimal = decimalTextOfNumber(raw);
    if (decimal === undefined) return fail(`${raw}: write this amount as quoted text with a unit, e.g. "1000 KAIA", so it stays exact`);
    text = decimal;
  } else if (typeof raw === "string") {
    text = raw;
  } else {
    return fail(`${show(raw)} is not an amount (e.g. "1000 KAIA", "0.5 KAIA", "10^18 kei")`);
  }
  try {
    return { ok: true, value: parseAmount(text) };
  } catch (error) {
    return fail(`${(error as Error).message} (amounts look like "1000 KAIA", "0.5 KAIA", "10^18 kei")`);
  }
}

function parseHash(field: FieldSpec, raw: unknown): OperandResult<string> {
  if (typeof raw !== "string") return fail(`${show(raw)} is not a 0x hex value (quote it in YAML)`);
  switch (field.operand) {
    case "event_topic":
      if (isTopicHash(raw)) return { ok: true, value: raw.toLowerCase() };
      return fromSignature(raw, eventTopic, "an event signature such as Transfer(address,address,uint256) or a 0x topic hash (64 hex digits)");
    case "selector":
      if (isSelector(raw)) return { ok: true, value: raw.toLowerCase() };
      return fromSignature(raw, functionSelector, "a function signature such as transfer(address,uint256) or a 0x selector (8 hex digits)");
    case "topic":
      if (isTopicHash(raw)) return { ok: true, value: raw.toLowerCase() };
      if (isAddress(raw)) return { ok: true, value: addressToTopic(raw) };
      return fail(`${show(raw)} is neither a 0x topic (64 hex digits) nor an address`);
    default:
      if (isTopicHash(raw)) return { ok: true, value: raw.toLowerCase() };
      return fail(`${show(raw)} is not a transaction hash (0x and 64 hex digits)`);
  }
}

function fromSignature(raw: string, hash: (s: string) => string, wanted: string): OperandResult<string> {
  if (!looksLikeSignature(raw)) return fail(`${show(raw)} is not ${wanted}`);
  try {
    return { ok: true, value: hash(raw) };
  } catch (error) {
    return fail((error as Error).message);
  }
}
