import { KaiawatchError } from "../common/errors.js";
import type { WatchedRecord } from "../model/record.js";
import type { FamilyField } from "../families/define-family.js";
import type { FieldSpec } from "../families/field-kinds.js";
import { familyOf } from "../families/registry.js";
import type { ArgValue, Scalar } from "./operand.js";
import { argValue } from "./operand.js";
import type { ConditionContext, ConditionIssue, ConditionNode, ConditionPath, TestNode } from "./parse-condition.js";
import { parseCondition } from "./parse-condition.js";
import { amountKeiOf, integerOf } from "../families/record-values.js";

/** One step of an evaluation, for `explain`: what was compared with what, and the outcome. */
export interface TraceEntry {
  path: ConditionPath;
  /** all, any, not, always, or an operator. */
  op: string;
  field?: string;
  /** The value as the rule wrote it. */
  expected?: unknown;
  /** The record's value as received (derived fields: the derived value); undefined when absent. */
  actual?: unknown;
  passed: boolean;
}

export interface Evaluation {
  passed: boolean;
  /** Every node, depth-first, without short-circuit, so that explain can show all of it. */
  trace: TraceEntry[];
}

export class ConditionError extends KaiawatchError {
  override name = "ConditionError";
  readonly issues: ConditionIssue[];
  constructor(issues: ConditionIssue[]) {
    super("KW_RULES_CONDITION", issues.map((i) => `${i.path.join(".") || "when"}: ${i.message}`).join("; "));
    this.issues = issues;
  }
}

/**
 * The reference meaning of a condition: a plain interpretation that reads every value
 * straight from the record on each call. Slow on purpose and kept simple, so that the
 * compiled closures can be checked against it (property test) and so that `explain` can
 * show why a record did or did not match. Throws ConditionError for an invalid `when`.
 */
export function evaluateCondition(when: unknown, record: WatchedRecord, context: ConditionContext): Evaluation {
  const parsed = parseCondition(when, context);
  if (!parsed.ok) throw new ConditionError(parsed.issues);
  return evaluateParsedCondition(parsed.node, record, context);
}

/** The same on a condition checked once with parseCondition (explain over many records). */
export function evaluateParsedCondition(node: ConditionNode, record: WatchedRecord, context: ConditionContext): Evaluation {
  const trace: TraceEntry[] = [];
  const passed = record.family === context.family && evaluateNode(node, record, context.watchedAccounts, trace);
  return { passed, trace };
}

function evaluateNode(node: ConditionNode, record: WatchedRecord, accounts: ReadonlySet<string> | undefined, trace: TraceEntry[]): boolean {
  switch (node.type) {
    case "always":
      trace.push({ path: node.path, op: "always", passed: true });
      return true;
    case "not": {
      const entry: TraceEntry = { path: node.path, op: "not", passed: false };
      trace.push(entry);
      entry.passed = !evaluateNode(node.child, record, accounts, trace);
      return entry.passed;
    }
    case "all":
    case "any": {
      const entry: TraceEntry = { path: node.path, op: node.type, passed: false };
      trace.push(entry);
      const results = node.children.map((child) => evaluateNode(child, record, accounts, trace));
      entry.passed = node.type === "all" ? results.every(Boolean) : results.some(Boolean);
      return entry.passed;
    }
    case "test": {
      const actual = readField(record, node.field, accounts);
      const passed = applyTest(node, normalize(node.field, actual));
      trace.push({ path: node.path, op: node.op, field: node.field.name, expected: node.raw, actual, passed });
      return passed;
    }
  }
}

/** The record's value of a field, as received (or derived from received values), as its family's definition reads it. */
export function readField(record: WatchedRecord, field: FieldSpec, accounts?: ReadonlySet<string>): unknown {
  const fields = familyOf(record.family).fieldsById;
  return Object.hasOwn(fields, field.id) ? (fields[field.id] as FamilyField<WatchedRecord>).read(record, field, accounts) : undefined;
}

type Value = string | bigint | boolean | ArgValue | undefined;

function normalize(field: FieldSpec, actual: unknown): Value {
  if (actual === undefined || actual === null) return undefined;
  switch (field.kind) {
    case "address":
    case "hash":
    case "keyword":
      return typeof actual === "string" ? actual.toLowerCase() : undefined;
    case "text":
      return typeof actual === "string" ? actual : undefined;
    case "integer":
      return integerOf(actual);
    case "amount":
      // A token amount is read from the log as base units already.
      return typeof actual === "bigint" ? actual : amountKeiOf(actual);
    case "boolean":
      return actual === true;
    case "arg":
      return typeof actual === "string" ? argValue(actual) : undefined;
  }
}

function same(field: FieldSpec, a: Value, b: Scalar): boolean {
  if (a === undefined) return false;
  if (field.kind !== "arg") return a === b;
  const x = a as ArgValue;
  const y = b as ArgValue;
  if (x.int !== undefined && y.int !== undefined) return x.int === y.int;
  if (x.hex !== undefined && y.hex !== undefined) return x.hex === y.hex;
  return x.text === y.text;
}

function applyTest(node: TestNode, value: Value): boolean {
  const field = node.field;
  const number = field.kind === "arg" ? (value as ArgValue | undefined)?.int : (value as bigint | undefined);
  const text = field.kind === "arg" ? (value as ArgValue | undefined)?.text : typeof value === "string" ? value : undefined;
  switch (node.op) {
    case "eq": return same(field, value, node.value);
    case "ne": return !same(field, value, node.value);
    case "in": return node.value.some((v) => same(field, value, v));
    case "not_in": return !node.value.some((v) => same(field, value, v));
    case "gt": return number !== undefined && number > node.value;
    case "gte": return number !== undefined && number >= node.value;
    case "lt": return number !== undefined && number < node.value;
    case "lte": return number !== undefined && number <= node.value;
    case "contains": return text !== undefined && text.includes(node.value);
    case "starts_with": return text !== undefined && text.startsWith(node.value);
    case "matches": return text !== undefined && node.value.test(text);
    case "exists": return (value !== undefined) === node.value;
  }
}
