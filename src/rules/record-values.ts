import { decimalTextOfNumber, kaiaToKei } from "../chain/units.js";

/**
 * Readings of record values that both the compiled conditions and the reference
 * evaluator need; lenient, because a record value that cannot be read makes a comparison
 * false rather than stopping the scan (the explorer client validates records already).
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
