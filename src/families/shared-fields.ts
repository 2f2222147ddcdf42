import { isAddress } from "../chain/address.js";
import { oneLine, truncate } from "../common/text.js";
import type { WatchedRecord } from "../model/record.js";
import type { FamilyField } from "./define-family.js";
import { lower } from "./record-values.js";

/** `block`: every family's. */
export const BLOCK_FIELD: FamilyField<WatchedRecord> = {
  kind: "integer",
  doc: "block number",
  example: "block: { gte: 150000000 }",
  read: (r) => r.block,
  prepare: (r) => BigInt(r.block),
};

/** `transaction`: every family's. */
export const TRANSACTION_FIELD: FamilyField<WatchedRecord> = caseBlindField({ kind: "hash", operand: "transaction", doc: "transaction hash", example: 'transaction: "0x…64 hex"' }, (r) => r.transactionHash);

/** in, out or self relative to an account (any letter case), undefined when neither side is it or there is no account. */
export function directionOf(from: string | undefined, to: string | undefined, account: string | undefined): "in" | "out" | "self" | undefined {
  if (account === undefined) return undefined;
  const a = account.toLowerCase();
  const out = from?.toLowerCase() === a;
  const into = to?.toLowerCase() === a;
  return out && into ? "self" : out ? "out" : into ? "in" : undefined;
}

/**
 * The same on values already lowercase (rules' prepared fields), relative to a set of
 * accounts: out when only `from` is one of them, in when only `to` is, self when both are
 * (for an accounts watch, a move between two listed accounts).
 */
export function directionOfLower(from: string | undefined, to: string | undefined, accounts: ReadonlySet<string> | undefined): "in" | "out" | "self" | undefined {
  if (accounts === undefined) return undefined;
  const out = from !== undefined && accounts.has(from);
  const into = to !== undefined && accounts.has(to);
  return out && into ? "self" : out ? "out" : into ? "in" : undefined;
}

/** 0x1234…abcd; the full address is in the record and the links. */
export function shortAddress(address: string | undefined): string {
  if (address === undefined) return "(none)";
  return isAddress(address) ? `${address.slice(0, 6)}…${address.slice(-4)}` : truncate(oneLine(address), 20);
}

/** On-chain text for a summary: on one line and cut. */
export const summaryText = (text: string, max: number): string => truncate(oneLine(text), max);

/** A key of a stored record (any JSON, read back from the store). */
export function storedField(obj: unknown, key: string): unknown {
  return typeof obj === "object" && obj !== null && Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

/** A stored value as text, when it is a scalar. */
export function storedText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value);
  return undefined;
}

type Template = Pick<FamilyField<never>, "kind" | "doc" | "example" | "operand" | "values">;

/** A text field compared case-insensitively (addresses, hashes, keywords): prepared lowercase, the rule index reading the text as received. */
export function caseBlindField<R>(template: Template, get: (record: R) => string | undefined): FamilyField<R> {
  return { ...template, read: get, prepare: (record) => lower(get(record)), raw: get };
}

/** A text field compared as received (free text; or values the reader lowercased already). */
export function exactTextField<R>(template: Template, get: (record: R) => string | undefined): FamilyField<R> {
  return { ...template, read: get, prepare: get, raw: get };
}
