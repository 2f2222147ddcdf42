import type { TokenInfo } from "../chain/token-info.js";

/**
 * How a field's values compare:
 * - address: 0x + 40 hex, case-insensitive;
 * - hash: 0x-hex (transaction hash, topic, selector), case-insensitive;
 * - keyword: a short word from a known set (CALL, Fail, KIP17, in), case-insensitive;
 * - text: free text written on chain (error messages, names), case-sensitive;
 * - integer: whole numbers of any size (bigint);
 * - amount: native KAIA amounts, compared as bigint kei;
 * - boolean: true / false;
 * - arg: a decoded event argument (text): compared as integers when both sides are
 *   integers, case-insensitively when both are 0x-hex, else as exact text.
 */
export type FieldKind = "address" | "hash" | "keyword" | "text" | "integer" | "amount" | "boolean" | "arg";

export const OPERATORS = ["eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "contains", "starts_with", "matches", "exists"] as const;
export type Operator = (typeof OPERATORS)[number];

const EQUALITY = ["eq", "ne", "in", "not_in", "exists"] as const;
const ORDER = ["gt", "gte", "lt", "lte"] as const;
const TEXT = ["contains", "starts_with", "matches"] as const;

export const OPERATORS_BY_KIND: Readonly<Record<FieldKind, readonly Operator[]>> = {
  address: EQUALITY,
  hash: EQUALITY,
  keyword: EQUALITY,
  text: [...EQUALITY, ...TEXT],
  integer: [...EQUALITY, ...ORDER],
  amount: [...EQUALITY, ...ORDER],
  boolean: ["eq", "ne", "exists"],
  arg: [...EQUALITY, ...ORDER, ...TEXT],
};

/** What a field is, after its name was resolved against a rule's source. */
export interface FieldSpec {
  /** As written in the rule: "amount", "topics[1]", "args.value". */
  name: string;
  /** The field without its index or argument name: "topics", "args". */
  id: string;
  kind: FieldKind;
  /** topics[i]: the index. */
  index?: number;
  /** args.NAME: the argument name. */
  arg?: string;
  /** Closed keyword fields: the lowercase values that exist. */
  values?: readonly string[];
  /** How a written value turns into what the field holds, beyond the kind's rule. */
  operand?: "event_topic" | "topic" | "selector" | "transaction" | "token";
  /**
   * The token fields of a token watch (`amount` of a Transfer log): the token this rule is
   * compiled for, undefined while the config is checked without JSON-RPC (any unit is then
   * accepted and checked at start-up), and the symbols of the watch's other tokens.
   */
  token?: TokenFieldContext;
  /**
   * Where the prepared value sits in the rules' prepared record: the field's position among
   * its family's prepared fields (define-family.ts), or undefined for a field compiled
   * another way (topics, arguments, direction).
   */
  slot?: number;
}

/** What a token watch's rule knows of its tokens when it is compiled for one of them. */
export interface TokenFieldContext {
  info: TokenInfo | undefined;
  /** Symbols of the watch's other tokens: an amount in one of them never matches this token. */
  otherSymbols: readonly string[];
}

/** What a family's definition says of one field a condition may name: its kind and a line of documentation. */
export type FieldTemplate = Omit<FieldSpec, "name" | "id" | "index" | "arg" | "account" | "token" | "slot"> & { doc: string; example: string };
