import type { RecordShape } from "../families/define-family.js";
import { familyOf } from "../families/registry.js";
import { BALANCE_ALERT_SOURCE, type RuleSource } from "../model/alert-document.js";

/** The record of a balance alert (built by the balance monitor, not read from the explorer). */
const BALANCE_READING = { address: "value", asset: "value", symbol: "value", decimals: "value", balance: "value", balance_base_units: "value", condition: "value" } as const;

/*
 * The record of each source, as `readRecordField` reads it (silences' --match, group.by,
 * cooldown_key): a family's from its definition (kept equal to the explorer's type there).
 */
const recordShape = (source: RuleSource): { readonly [key: string]: RecordShape } => (source === BALANCE_ALERT_SOURCE ? BALANCE_READING : familyOf(source).recordShape);

/**
 * The names rules use (the family definitions in src/families/) for fields the record keeps under another name:
 * `silence --match`, `group.by` and `cooldown_key` accept them too, so that one vocabulary
 * works everywhere (`status=Fail` as in a rule's `when`, or `transaction_status.status=Fail`
 * as in the record). Each reads the first of its record paths that the record has.
 */
export const RULE_FIELD_ALIASES: Readonly<Record<string, readonly string[]>> = {
  status: ["transaction_status.status"],
  fail_message: ["transaction_status.fail_message"],
  transaction: ["transaction_hash"],
  block: ["block_id", "block_number"],
  estimated: ["estimated_event_log"],
};

/** Rule fields computed from the record, not in it: a silence or a grouping key cannot read them. */
export const COMPUTED_RULE_FIELDS: Readonly<Record<string, string>> = {
  direction: "from or to",
  mint: "from (the zero address)",
  burn: "to",
  failed: "error, or status",
};

/**
 * True when `path` names a field that records of this family have (see readRecordField:
 * a dot path, list items by index, and `NAME` for `NAME_address`). A silence on a field that
 * does not exist would match nothing, or, matching "", everything without the field.
 */
export function recordFieldExists(family: RuleSource, path: string): boolean {
  const record = recordShape(family);
  if (RULE_FIELD_ALIASES[path]?.some((target) => exists(record, target.split("."))) === true) return true;
  const keys = path.split(".");
  if (keys.length === 1 && !Object.hasOwn(record, path) && Object.hasOwn(record, `${path}_address`)) return true;
  return exists(record, keys);
}

/** The top-level fields of the family's records, for an error message. */
export function recordFieldNames(family: RuleSource): string[] {
  return Object.keys(recordShape(family));
}

function exists(shape: RecordShape, keys: readonly string[]): boolean {
  // An object read whole is its contract_address or address (readRecordField), so a path may end at one.
  if (keys.length === 0) return true;
  if (shape === "value") return false;
  const [key, ...rest] = keys as [string, ...string[]];
  if (isList(shape)) return /^\d+$/.test(key) && exists(shape.list, rest);
  const fields = shape as { readonly [key: string]: RecordShape };
  return Object.hasOwn(fields, key) && exists(fields[key]!, rest);
}

/** A list shape ({list}) rather than an object with fields: no record has a field named "list". */
function isList(shape: Exclude<RecordShape, "value">): shape is { readonly list: RecordShape } {
  return Object.keys(shape).length === 1 && Object.hasOwn(shape, "list");
}
