import { KaiawatchError } from "../common/errors.js";

/**
 * Exact native amounts. KAIA has 18 decimals; its smallest unit is the kei. Every amount
 * is held as a bigint number of kei, never as a JavaScript float: 0.1 + 0.2 KAIA must be
 * exactly 0.3 KAIA when a threshold decides whether treasury staff get woken up.
 */
export const KAIA_DECIMALS = 18;
export const KEI_PER_KAIA = 10n ** 18n;

/** Units a rule may write, case-insensitive, with their number of decimals in kei. */
export const AMOUNT_UNITS: Readonly<Record<string, number>> = Object.freeze({ kaia: 18, gkei: 9, kei: 0 });

/**
 * The unit of a number meant as the integer a contract holds (an event argument such as a
 * Transfer's `value`): written out, because the same digits in KAIA or whole tokens differ by
 * 10^decimals. For KAIA amounts it is the kei.
 */
export const BASE_UNITS = "base_units";

/** No amount on Kaia can exceed a uint256; a bigger number in a rule is a typo (2^256 itself is a fine bound). */
const LIMIT = 2n ** 256n;

export class AmountError extends KaiawatchError {
  override name = "AmountError";
  constructor(message: string) {
    super("KW_CHAIN_AMOUNT", message);
  }
}

const PLAIN_KAIA = /^(\d+)(?:\.(\d{1,18}))?$/;

/**
 * A plain decimal KAIA amount as the explorer writes it ("1.5", "0.000000000000000001",
 * "1000") to kei. At most 18 decimals: a finer amount cannot exist on chain.
 */
export function kaiaToKei(decimal: string): bigint {
  const m = PLAIN_KAIA.exec(decimal);
  if (!m) {
    const why = /^\d+\.\d{19,}$/.test(decimal) ? "more than 18 decimals (1 kei = 0.000000000000000001 KAIA)" : "not a plain decimal number";
    throw new AmountError(`${JSON.stringify(decimal)} is ${why}`);
  }
  const whole = BigInt(m[1] as string) * KEI_PER_KAIA;
  const fraction = m[2];
  return fraction === undefined ? whole : whole + BigInt(fraction.padEnd(18, "0"));
}

/**
 * Exact KAIA text of a kei amount, without trailing zeros: 1500000000000000000000n → "1500",
 * 1n → "0.000000000000000001". `group` adds thousands separators to the whole part
 * ("1,500") for human-facing summaries; parse never accepts those back.
 */
export function formatKei(kei: bigint, options: { group?: boolean } = {}): string {
  const negative = kei < 0n;
  const abs = negative ? -kei : kei;
  let whole = (abs / KEI_PER_KAIA).toString();
  if (options.group) whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const fraction = (abs % KEI_PER_KAIA).toString().padStart(18, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/**
 * An amount a person wrote, to kei. The number may be
 *   a decimal: `1000`, `0.5`, `1_000_000` (underscores group digits),
 *   a power: `10^18`, `5 * 10^18` (or `5 × 10^18`),
 *   scientific: `1.5e3`, `2e-6`,
 * followed by a unit, case-insensitive: `KAIA`, `gkei` (10^9 kei), `kei` or `base_units`
 * (the kei again, for rules that say base units everywhere). The unit is required: a number
 * alone was read as KAIA once, and "1000" meant as kei is 10^18 times off. The result must be
 * a whole number of kei (so at most 18 decimals of KAIA, none of kei), not negative, and fit
 * in a uint256.
 */
export function parseAmount(text: string): bigint {
  const m = /^\s*(.*?)\s*([A-Za-z_]+)?\s*$/s.exec(text);
  const numberText = m?.[1] ?? "";
  const unitText = m?.[2];
  if (numberText === "") throw new AmountError(`${JSON.stringify(text)} is not an amount: write a number and a unit, e.g. "1000 KAIA"`);
  if (unitText === undefined) throw new AmountError(noUnitMessage(numberText));
  const decimals = unitText.toLowerCase() === BASE_UNITS ? 0 : AMOUNT_UNITS[unitText.toLowerCase()];
  if (decimals === undefined) {
    throw new AmountError(`${JSON.stringify(text)}: unknown unit "${unitText}" (use KAIA, gkei or kei)`);
  }
  const value = parseExact(numberText, text);
  if (value.num < 0n) throw new AmountError(`${JSON.stringify(text)}: an amount cannot be negative`);
  const kei = toInteger(value, decimals);
  if (kei === undefined) {
    throw new AmountError(
      decimals === 0
        ? `${JSON.stringify(text)}: ${unitText} is the smallest unit, it takes no fraction`
        : `${JSON.stringify(text)}: more than ${decimals} decimals of ${unitText} is finer than 1 kei`,
    );
  }
  if (kei > LIMIT) throw new AmountError(`${JSON.stringify(text)}: larger than any amount on chain (2^256)`);
  return kei;
}

/**
 * What to write instead of a KAIA amount without a unit (`1000`): every form, the one that
 * keeps the old meaning first, so that the error says how to rewrite the value.
 */
export function noUnitMessage(numberText: string): string {
  return `${numberText} has no unit: write "${numberText} KAIA" (what a number without a unit meant until now), "${numberText} gkei", or "${numberText} kei" (the smallest unit, 10^-18 KAIA)`;
}

/**
 * An integer a person wrote (token amounts in base units, token ids, block numbers):
 * `1000`, `-5`, `10^18`, `5 * 10^18`, `1e6`, `1_000`. Refuses anything that is not a
 * whole number, and magnitudes beyond 2^256.
 */
export function parseInteger(text: string): bigint {
  const value = parseExact(text.trim(), text);
  const n = toInteger(value, 0);
  if (n === undefined) throw new AmountError(`${JSON.stringify(text)} is not a whole number`);
  if (n > LIMIT || n < -LIMIT) throw new AmountError(`${JSON.stringify(text)} is larger than 2^256`);
  return n;
}

/**
 * The decimal text a YAML/JSON number stands for, when that is beyond doubt: a safe
 * integer, or a plain number of at most 15 significant digits (every such decimal survives
 * the trip through a double). Otherwise undefined: the caller should ask for a quoted string.
 */
export function decimalTextOfNumber(n: number): string | undefined {
  if (!Number.isFinite(n)) return undefined;
  if (Number.isInteger(n)) return Number.isSafeInteger(n) ? String(n) : undefined;
  const text = String(n);
  if (!/^-?\d+\.\d+$/.test(text)) return undefined;
  const significant = text.replace(/^-?0*\.?0*/, "").replace(".", "");
  return significant.length <= 15 ? text : undefined;
}

/**
 * A number a person wrote (any form parseAmount takes, without a unit) times 10^decimals,
 * or undefined when that is not a whole number. For units other than KAIA's (token amounts).
 * `whole` is the full text, for messages.
 */
export function scaleNumber(numberText: string, decimals: number, whole: string): bigint | undefined {
  return toInteger(parseExact(numberText, whole), decimals);
}

/** A rational number num / 10^scale (scale may be negative). */
interface Exact {
  num: bigint;
  scale: number;
}

const DIGITS = String.raw`\d(?:_?\d)*`;
const MANTISSA = String.raw`(?:${DIGITS}(?:\.${DIGITS})?|\.${DIGITS})`;
const NUMBER = new RegExp(
  String.raw`^(-)?(?:(${MANTISSA})(?:[eE]([+-]?\d{1,4}))?|(?:(${MANTISSA})\s*[*×]\s*)?(${DIGITS})\s*\^\s*(\d{1,4}))$`,
);

function parseExact(numberText: string, whole: string): Exact {
  const m = NUMBER.exec(numberText);
  if (!m) throw new AmountError(`${JSON.stringify(whole)} is not a number (write e.g. 1000, 0.5, 10^18 or 5 * 10^18)`);
  const sign = m[1] ? -1n : 1n;
  if (m[2] !== undefined) {
    const mantissa = decimal(m[2]);
    const exponent = m[3] === undefined ? 0 : Number(m[3]);
    if (Math.abs(exponent) > 300) throw new AmountError(`${JSON.stringify(whole)}: exponent out of range`);
    return { num: sign * mantissa.num, scale: mantissa.scale - exponent };
  }
  const mantissa = m[4] === undefined ? { num: 1n, scale: 0 } : decimal(m[4]);
  const base = BigInt((m[5] as string).replaceAll("_", ""));
  const exponent = Number(m[6]);
  // Bounded so that a typo such as 10^9999 cannot stall config loading on a huge bigint.
  if (exponent > 300 || (base > 1n && base.toString(2).length * exponent > 2048)) {
    throw new AmountError(`${JSON.stringify(whole)}: larger than any amount on chain (2^256)`);
  }
  return { num: sign * mantissa.num * base ** BigInt(exponent), scale: mantissa.scale };
}

function decimal(text: string): Exact {
  const clean = text.replaceAll("_", "");
  const dot = clean.indexOf(".");
  if (dot < 0) return { num: BigInt(clean), scale: 0 };
  const whole = clean.slice(0, dot);
  const fraction = clean.slice(dot + 1);
  return { num: BigInt(`${whole}${fraction}` || "0"), scale: fraction.length };
}

/** value × 10^decimals when that is a whole number, else undefined. */
function toInteger(value: Exact, decimals: number): bigint | undefined {
  const shift = decimals - value.scale;
  if (shift >= 0) return value.num * 10n ** BigInt(shift);
  const divisor = 10n ** BigInt(-shift);
  return value.num % divisor === 0n ? value.num / divisor : undefined;
}
