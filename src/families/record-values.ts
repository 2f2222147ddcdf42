import { decimalTextOfNumber, kaiaToKei } from "../chain/units.js";

/**
 * Readings of record values that the family definitions' fields, the compiled conditions and
 * the reference evaluator need; lenient, because a record value that cannot be read makes a
 * comparison false rather than stopping the scan (the explorer client validates records already).
 */

/** A whole number from decimal text or a safe-integer number, else undefined. */
export function integerOf(value: unknown): bigint | undefined {
  if (typeof value === "string") return /^-?\d+$/.test(value) ? BigInt(value) : undefined;
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : undefined;
  return undefined;
}

/** A native amount (decimal KAIA text, or a number as the spec documents it) in kei, else undefined. */
export function amountKeiOf(value: unknown): bigint | undefined {
  const text = typeof value === "number" ? decimalTextOfNumber(value) : value;
  if (typeof text !== "string") return undefined;
  try {
    return kaiaToKei(text);
  } catch {
    return undefined;
  }
}

/** An event-argument value: its text, and its integer / lowercase-hex readings when it has them. */
export interface ArgValue {
  text: string;
  int: bigint | undefined;
  hex: string | undefined;
}

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

/** A prepared value: lowercase text, bigint, boolean, or undefined when absent. */
export type PreparedValue = string | bigint | boolean | undefined;

/**
 * A status that says Fail, in any letter case (the explorer's statuses are open text), without
 * lowering it: the rules read this for every record's amount, and "Success" never allocates.
 */
export function isFailStatus(status: string | undefined): boolean {
  return status !== undefined && status.length === 4 && (status === "Fail" || status.toLowerCase() === "fail");
}

export const lower = (s: string | undefined): string | undefined => (typeof s === "string" ? s.toLowerCase() : undefined);
