import { quotedSymbol } from "./token-symbol.js";
import { AMOUNT_UNITS, parseAmount } from "../chain/units.js";
import { TOKENS_UNIT, parseTokenAmount } from "../chain/token-amounts.js";
import type { TokenInfo } from "../chain/token-info.js";

/** What a balance is of: KAIA, or a KIP-7 token (lowercase address). */
export type BalanceAsset = "KAIA" | string;

const BOUNDS = ["lt", "lte", "gt", "gte", "eq", "ne"] as const;
type Bound = (typeof BOUNDS)[number];

/** A balance rule compiled for one asset of its watch. */
export interface BalanceTest {
  asset: BalanceAsset;
  /** True when the balance (in base units: kei, or the token's) meets the condition. */
  holds(balance: bigint): boolean;
  /** The condition as written, for messages: `lt "100 KAIA"`. */
  text: string;
}

export type BalanceParse = { ok: true; condition: BalanceCondition } | { ok: false; issues: BalanceIssue[] };

/** A balance rule, checked: the assets it applies to, and the addresses (undefined: all of its watch). */
export interface BalanceCondition {
  tests: BalanceTest[];
  addresses: ReadonlySet<string> | undefined;
}

export interface BalanceIssue {
  /** Inside `when`. */
  path: (string | number)[];
  message: string;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Checks the `when` of a balance watch's rule: `{ balance: { lt: "100 KAIA" } }`, bounds
 * lt/lte/gt/gte/eq/ne (several: all must hold), optionally `address: "0x…"` or
 * `address: { in: [...] }`. The unit of the amounts names the asset: KAIA (or kei, gkei)
 * for the KAIA balance, a token's symbol for that token's balance, "tokens" for every token
 * of the watch, each in its own decimals. One rule reads one kind of asset.
 *
 * `tokens` undefined: the config is checked without JSON-RPC, token amounts only for their
 * shape (start-up checks them against the tokens' decimals and symbols).
 */
export function parseBalanceCondition(when: unknown, tokens: readonly TokenInfo[] | undefined, tokenCount: number): BalanceParse {
  const issues: BalanceIssue[] = [];
  const fail = (path: (string | number)[], message: string) => {
    issues.push({ path, message });
    return { ok: false as const, issues };
  };
  if (!isMap(when) || !isMap(when.balance)) return fail([], 'a balance rule needs a condition on its balance, e.g. when: { balance: { lt: "100 KAIA" } }');
  for (const key of Object.keys(when)) if (key !== "balance" && key !== "address") fail([key], `unknown field "${key}" for balances; fields: balance, address`);
  let addresses: Set<string> | undefined;
  if (when.address !== undefined) {
    const list = typeof when.address === "string" ? [when.address] : isMap(when.address) && Array.isArray(when.address.in) ? when.address.in : undefined;
    if (list === undefined || list.some((a) => typeof a !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(a))) fail(["address"], 'expected an address or { in: ["0x…", …] }');
    else addresses = new Set(list.map((a) => (a as string).toLowerCase()));
  }
  const bounds = Object.entries(when.balance);
  if (bounds.length === 0) fail(["balance"], `no bound: write one of ${BOUNDS.join(", ")}`);
  // Each bound, read per asset: [asset, value] pairs.
  const perAsset = new Map<BalanceAsset, Array<{ op: Bound; value: bigint; raw: string }>>();
  let kinds = 0;
  let sawKaia = false;
  let sawToken = false;
  for (const [op, raw] of bounds) {
    const at = ["balance", op];
    if (!(BOUNDS as readonly string[]).includes(op)) {
      fail(at, `unknown operator "${op}"; balance takes ${BOUNDS.join(", ")}`);
      continue;
    }
    if (typeof raw !== "string") {
      fail(at, `write the amount as quoted text with a unit, e.g. "100 KAIA" or "5000 USDT"`);
      continue;
    }
    const unit = /\s(\S+)$/.exec(raw.trim())?.[1];
    if (unit === undefined || Object.hasOwn(AMOUNT_UNITS, unit.toLowerCase())) {
      sawKaia = true;
      try {
        const value = parseAmount(raw);
        const list = perAsset.get("KAIA") ?? [];
        list.push({ op: op as Bound, value, raw });
        perAsset.set("KAIA", list);
      } catch (error) {
        fail(at, (error as Error).message);
      }
      continue;
    }
    sawToken = true;
    if (tokenCount === 0) {
      fail(at, `${JSON.stringify(raw)}: this watch reads KAIA only; write the amount in KAIA, or list the token under the watch's tokens:`);
      continue;
    }
    if (tokens === undefined) continue;
    const named = /^tokens?$/i.test(unit) ? tokens : tokens.filter((t) => t.symbol === unit);
    if (named.length === 0) {
      const symbols = tokens.flatMap((t) => t.symbol ?? []);
      fail(at, `${JSON.stringify(raw)}: unknown unit ${JSON.stringify(unit)}; write KAIA, "${TOKENS_UNIT}"${symbols.length ? ` or one of ${symbols.map(quotedSymbol).join(", ")}` : ""}`);
      continue;
    }
    for (const token of named) {
      try {
        const value = parseTokenAmount(raw, token);
        const list = perAsset.get(token.address) ?? [];
        list.push({ op: op as Bound, value, raw });
        perAsset.set(token.address, list);
      } catch (error) {
        fail(at, (error as Error).message);
      }
    }
  }
  kinds = (sawKaia ? 1 : 0) + (sawToken ? 1 : 0);
  if (kinds > 1) fail(["balance"], "one rule reads one asset: write the KAIA bound and the token bound in two rules");
  if (issues.length > 0) return { ok: false, issues };
  const tests: BalanceTest[] = [...perAsset].map(([asset, list]) => ({
    asset,
    text: list.map((b) => `${b.op} ${JSON.stringify(b.raw)}`).join(" and "),
    holds: (balance) => list.every((b) => compare(balance, b.op, b.value)),
  }));
  return { ok: true, condition: { tests, addresses } };
}

function compare(balance: bigint, op: Bound, value: bigint): boolean {
  switch (op) {
    case "lt": return balance < value;
    case "lte": return balance <= value;
    case "gt": return balance > value;
    case "gte": return balance >= value;
    case "eq": return balance === value;
    case "ne": return balance !== value;
  }
}
