import { quotedSymbol } from "./token-symbol.js";
import { quotedText } from "../common/sanitize-text.js";
import { addressToTopic, hasValidChecksum, isAddress } from "../chain/address.js";
import { eventTopic, functionSelector, isSelector, isTopicHash, looksLikeSignature } from "../chain/signatures.js";
import { AMOUNT_UNITS, BASE_UNITS, decimalTextOfNumber, parseAmount, parseInteger } from "../chain/units.js";
import { TOKENS_UNIT, parseTokenAmount } from "../chain/token-amounts.js";
import type { FieldSpec } from "../families/field-kinds.js";
import { argValue, type ArgValue } from "../families/record-values.js";

export { argValue, type ArgValue };

/**
 * A value written in a rule, turned once (at load) into the form the field holds, so
 * that evaluation only compares:
 * - address, hash, keyword: lowercase string;  text: string;
 * - integer, amount: bigint;  boolean: boolean;  arg: ArgValue.
 */
export type Scalar = string | bigint | boolean | ArgValue;


export type OperandResult<T> = { ok: true; value: T } | { ok: false; message: string };

const fail = (message: string): { ok: false; message: string } => ({ ok: false, message });
// String() of a map says "[object Object]", and throws on one without a prototype (found by fuzzing).
const show = (raw: unknown): string =>
  typeof raw === "string" ? JSON.stringify(raw) : Array.isArray(raw) ? "a list" : typeof raw === "object" && raw !== null ? "a map" : String(raw);

/** One value for `eq`, `ne`, `in`, `not_in` of a field. */
export function parseScalar(field: FieldSpec, raw: unknown): OperandResult<Scalar> {
  if (raw === null || raw === undefined) return fail(`a value is missing; to match a missing ${field.name} write { exists: false }`);
  if (typeof raw === "object") return fail(`expected a single value, got ${Array.isArray(raw) ? "a list" : "an object"}`);
  switch (field.kind) {
    case "address":
      if (field.operand === "token" && typeof raw === "string" && !raw.startsWith("0x")) return parseTokenSymbol(field, raw);
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
    case "amount": {
      if (field.token === undefined) return parseAmountValue(raw);
      // No token amount is negative: an amount of another token equals nothing here.
      const r = parseTokenAmountValue(field, raw);
      return r.ok && r.value === OTHER_TOKEN ? { ok: true, value: -1n } : (r as OperandResult<bigint>);
    }
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
export function parseBound(field: FieldSpec, raw: unknown, op: "gt" | "gte" | "lt" | "lte" = "gte"): OperandResult<bigint> {
  if (field.kind === "amount" && field.token !== undefined) {
    const r = parseTokenAmountValue(field, raw);
    if (!r.ok || r.value !== OTHER_TOKEN) return r as OperandResult<bigint>;
    // A bound in another token's symbol is a rule about that token: a bound no uint256 passes.
    return { ok: true, value: op === "gt" || op === "gte" ? 2n ** 256n : -1n };
  }
  if (field.kind === "amount") return parseAmountValue(raw);
  if (field.kind === "integer") return parseIntegerValue(raw);
  return parseArgBound(field, raw, op);
}

/**
 * The bound of a decoded argument (`args.value: { gt: … }`). The argument is an integer as the
 * contract holds it, and nothing in its name says what one unit of it is: `gt: 1000000` on an
 * 18-decimal token's Transfer lets every transfer through. So the bound takes a unit, one of
 * - `base_units`: the integer as written (what a number without a unit meant until now);
 * - `KAIA`, `gkei`, `kei`: an 18-decimal amount, in kei;
 * - `tokens` or the symbol of one of the watch's tokens (a token watch's rule): whole tokens.
 */
function parseArgBound(field: FieldSpec, raw: unknown, op: "gt" | "gte" | "lt" | "lte"): OperandResult<bigint> {
  const text = typeof raw === "number" ? decimalTextOfNumber(raw) : typeof raw === "string" ? raw.trim() : undefined;
  if (text === undefined) return fail(`${show(raw)} is not a number with a unit, e.g. "1000000 ${BASE_UNITS}"`);
  // The unit is the last word (searched without a regular expression: a config value may be long).
  const cut = Math.max(text.lastIndexOf(" "), text.lastIndexOf("\t"), text.lastIndexOf("\n"));
  const unit = text.slice(cut + 1);
  if (cut < 0 || !/[A-Za-z]/.test(unit)) return fail(argWithoutUnit(field, text));
  const numberText = text.slice(0, cut).trim();
  try {
    if (unit.toLowerCase() === BASE_UNITS) return { ok: true, value: parseInteger(numberText) };
    if (Object.hasOwn(AMOUNT_UNITS, unit.toLowerCase())) return { ok: true, value: parseAmount(text) };
  } catch (error) {
    return fail((error as Error).message);
  }
  if (field.token !== undefined) return parseBound({ ...field, kind: "amount" }, raw, op);
  return fail(`${show(raw)}: unknown unit "${unit}"; write "${numberText} ${BASE_UNITS}", or "${numberText} KAIA" for an 18-decimal amount (a token's symbol is a unit in the rules of an account watch with tokens:)`);
}

/** The error of an argument's bound without a unit: the three ways to write it, the one that keeps the old meaning first. */
function argWithoutUnit(field: FieldSpec, n: string): string {
  const symbol = field.token?.info?.symbol;
  const tokens =
    field.token === undefined
      ? `"${n} USDT" (whole tokens by symbol, in the rules of an account watch with tokens:)`
      : `${symbol === undefined ? `"${n} USDT"` : quotedText(`${n} ${symbol}`, 60)} (whole tokens, by the symbol of one of the watch's tokens, or "${n} ${TOKENS_UNIT}")`;
  return `${n} has no unit, and an argument does not say its own: write "${n} ${BASE_UNITS}" (the integer as the contract holds it: what a number without a unit meant until now), "${n} KAIA" (an 18-decimal amount), or ${tokens}`;
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

/**
 * `token: USDT`: the symbol of one of the watch's tokens stands for that token's address.
 * The rule is compiled once per token: its own symbol is its address, another token's
 * symbol a value no address equals. Without the tokens' infos (the config checked without
 * JSON-RPC) any symbol passes; start-up checks it.
 */
function parseTokenSymbol(field: FieldSpec, raw: string): OperandResult<string> {
  const token = field.token;
  const symbol = raw.trim();
  if (symbol === "") return fail(`${show(raw)} is neither a token address nor a symbol`);
  const notAnAddress = `symbol ${symbol}`;
  if (token?.info === undefined) return { ok: true, value: notAnAddress };
  if (token.info.symbol === symbol) return { ok: true, value: token.info.address };
  if (token.otherSymbols.includes(symbol)) return { ok: true, value: notAnAddress };
  // Sorted: the rule is checked once per token, and one message should read the same each time.
  const known = [token.info.symbol, ...token.otherSymbols].filter((s): s is string => s !== undefined).sort();
  return fail(`${show(raw)} is neither an address nor the symbol of a token of this watch${known.length > 0 ? ` (${known.map(quotedSymbol).join(", ")}; letter case counts)` : ""}`);
}

/** An amount written in the symbol of another token of the same watch. */
const OTHER_TOKEN = Symbol("other token");

/**
 * A token amount of a token watch's rule, in base units of the token the rule is compiled
 * for (see parseTokenAmount). Without the token's info (the config checked without
 * JSON-RPC) only the shape is checked: a number and a unit; start-up checks the rest.
 */
function parseTokenAmountValue(field: FieldSpec, raw: unknown): OperandResult<bigint | typeof OTHER_TOKEN> {
  const token = field.token;
  if (typeof raw !== "string") return fail(`${show(raw)} is not a token amount: write quoted text with a unit, e.g. "50000 ${TOKENS_UNIT}" or "50000 USDT" (the token's symbol)`);
  const unit = /\s(\S+)$/.exec(raw.trim())?.[1];
  if (token?.info === undefined) {
    if (unit === undefined || !/[A-Za-z]/.test(unit)) return fail(`${show(raw)} has no unit: write e.g. "50000 USDT" (the token's symbol), "50000 ${TOKENS_UNIT}" (whole tokens) or "50000 ${BASE_UNITS}" (the integer the contract stores)`);
    return { ok: true, value: 0n };
  }
  const symbol = token.info.symbol;
  if (symbol !== undefined && raw.trim().endsWith(` ${symbol}`)) {
    // Its own symbol first: two tokens of a watch may share a symbol.
  } else if (token.otherSymbols.some((other) => raw.trim().endsWith(` ${other}`))) return { ok: true, value: OTHER_TOKEN };
  try {
    return { ok: true, value: parseTokenAmount(raw, token.info) };
  } catch (error) {
    return fail((error as Error).message);
  }
}
