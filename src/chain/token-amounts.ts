import { AmountError, BASE_UNITS, parseInteger, scaleNumber } from "./units.js";
import { MAX_TOKEN_DECIMALS, type TokenInfo } from "./token-info.js";
import { quotedText } from "../common/sanitize-text.js";

/** No balance or transfer can exceed a uint256. */
const LIMIT = 2n ** 256n - 1n;

/** The unit that always means "whole tokens of this token", whatever its symbol. */
export const TOKENS_UNIT = "tokens";

/**
 * An amount of a KIP-7 token a person wrote, to base units (the integer the contract
 * stores). The number takes every form KAIA amounts take (`50000`, `0.5`, `1_000`, `1.5e3`,
 * `5 * 10^6`), followed by the unit:
 *   - `tokens` (or `token`, any letter case): whole tokens of this token;
 *   - the token's own symbol, exactly as the contract returns it, letter case included:
 *     `"50000 USDT"`. Case matters because the symbol is a check that the rule was written
 *     for this token, and look-alike tokens differ by exactly such details ("USDT", "UsdT");
 *   - `base_units`: the integer as the contract stores it (`"50000 * 10^6 base_units"`).
 * A number without a unit is refused: base units and whole tokens differ by 10^decimals.
 * The value must be a whole number of base units (a fraction finer than 10^-decimals is
 * refused; trailing zeros are fine, the value is what counts), not negative, within a uint256.
 */
export function parseTokenAmount(text: string, token: Pick<TokenInfo, "address" | "decimals" | "symbol">): bigint {
  const { decimals, symbol } = token;
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_TOKEN_DECIMALS) throw new AmountError(`token ${token.address} has ${decimals} decimals, outside 0..${MAX_TOKEN_DECIMALS}`);
  const trimmed = text.trim();
  // The symbol is a stranger's text: quoted inert (sanitize-text.ts), as every sink shows it.
  const unitName = symbol === undefined ? `"${TOKENS_UNIT}"` : `"${TOKENS_UNIT}" or ${quotedText(symbol)}`;
  // The unit is what follows the last space: symbols never start a number, and a symbol with
  // spaces inside (seen on spam tokens) is matched as a whole suffix first.
  let numberText: string | undefined;
  if (symbol !== undefined && symbol !== "" && trimmed.endsWith(symbol) && /\s$/.test(trimmed.slice(0, -symbol.length))) numberText = trimmed.slice(0, -symbol.length).trim();
  else {
    const m = /^(.*?)\s+(\S+)$/s.exec(trimmed);
    if (m && (m[2] as string).toLowerCase() === BASE_UNITS) return baseUnits(m[1] as string, text);
    if (m && /^tokens?$/i.test(m[2] as string)) numberText = (m[1] as string).trim();
    else if (m && symbol !== undefined && (m[2] as string).toLowerCase() === symbol.toLowerCase()) {
      throw new AmountError(`${JSON.stringify(text)}: the symbol of ${token.address} is ${quotedText(symbol)}, letter case included (or write "${TOKENS_UNIT}")`);
    } else if (m && /[A-Za-z]/.test(m[2] as string)) {
      throw new AmountError(`${JSON.stringify(text)}: unknown unit ${JSON.stringify(m[2])} for token ${token.address}; write ${unitName}`);
    } else {
      throw new AmountError(`${JSON.stringify(text)} has no unit: write ${symbol === undefined ? "" : `${quotedText(`${trimmed} ${symbol}`, 60)} or `}"${trimmed} ${TOKENS_UNIT}" (whole tokens), or "${trimmed} ${BASE_UNITS}" (the integer the contract stores) (token ${token.address})`);
    }
  }
  if (numberText === "") throw new AmountError(`${JSON.stringify(text)} is not an amount: write a number and ${unitName}`);
  const units = scaleNumber(numberText, decimals, text);
  if (units === undefined) {
    throw new AmountError(
      decimals === 0
        ? `${JSON.stringify(text)}: token ${token.address} has 0 decimals, it takes no fraction`
        : `${JSON.stringify(text)}: token ${token.address} has ${decimals} decimals, this is finer than its smallest unit`,
    );
  }
  if (units < 0n) throw new AmountError(`${JSON.stringify(text)}: an amount cannot be negative`);
  if (units > LIMIT) throw new AmountError(`${JSON.stringify(text)}: larger than any token amount (a uint256)`);
  return units;
}

/** `"1000000 base_units"`: the integer the contract stores, as written. */
function baseUnits(numberText: string, text: string): bigint {
  const units = parseInteger(numberText);
  if (units < 0n) throw new AmountError(`${JSON.stringify(text)}: an amount cannot be negative`);
  if (units > LIMIT) throw new AmountError(`${JSON.stringify(text)}: larger than any token amount (a uint256)`);
  return units;
}

/**
 * The exact decimal text of an amount in base units, without trailing zeros:
 * (1500000n, 6) → "1.5", (1n, 18) → "0.000000000000000001", (7n, 0) → "7". `group` adds
 * thousands separators to the whole part for human-facing text; parse never accepts those back.
 */
export function formatTokenAmount(units: bigint, decimals: number, options: { group?: boolean } = {}): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_TOKEN_DECIMALS) throw new AmountError(`${decimals} decimals is outside 0..${MAX_TOKEN_DECIMALS}`);
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const scale = 10n ** BigInt(decimals);
  let whole = (abs / scale).toString();
  if (options.group) whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const fraction = decimals === 0 ? "" : (abs % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}
