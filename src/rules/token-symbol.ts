import { quotedText } from "../common/sanitize-text.js";
import { truncate } from "../common/text.js";
import { oneLine } from "../common/text.js";

/** The longest token symbol an alert carries, in code points. */
export const TOKEN_SYMBOL_MAX = 24;

/**
 * A token's symbol as every alert of the token carries it (a transfer's summary and its
 * `token.symbol`, a balance alert's summary and `record.symbol`, the templates' variables):
 * one line, cut to 24 code points, "tokens" where the token has none. One function, so the
 * same token never reads two ways; the symbol is on-chain text, which each sink escapes.
 */
export function tokenSymbolText(symbol: string | undefined): string {
  return symbol === undefined ? "tokens" : truncate(oneLine(symbol), TOKEN_SYMBOL_MAX);
}

/**
 * A token's symbol quoted in a message for the terminal (a config error, `explain`): on-chain
 * text, so sanitized as every sink does (bidi and control characters made visible, invisible
 * ones removed, one line) and cut, before it is quoted.
 */
export function quotedSymbol(symbol: string): string {
  return quotedText(symbol);
}
