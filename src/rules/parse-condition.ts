import type { WitnessRole } from "../model/witness-role.js";
import type { RecordFamily } from "../model/record.js";
import type { FieldSpec, Operator, TokenFieldContext } from "./fields.js";
import { OPERATORS, OPERATORS_BY_KIND, resolveField } from "./fields.js";
import type { Scalar } from "./operand.js";
import { parseBound, parseScalar } from "./operand.js";
import type { SafePattern } from "./safe-regexp.js";
import { compileSafePattern } from "./safe-regexp.js";

export type ConditionPath = readonly (string | number)[];

export interface ConditionIssue {
  /** Where inside `when` (or, from compileRuleCondition, inside the whole config). */
  path: ConditionPath;
  message: string;
}

export interface ConditionContext {
  family: RecordFamily;
  /** The accounts (lowercase) an account or accounts watch watches; enables `direction`. */
  watchedAccounts?: ReadonlySet<string>;
  /** A token watch's rule on event_logs: enables from, to, direction and amount of its Transfer logs. */
  token?: TokenFieldContext;
  /** Where the rule's records are read, when the node may make them (fields it lacks are refused: FamilyField.fromNode). */
  reader?: WitnessRole | "both";
}

/** One comparison; `value` is already in the field's comparable form. */
export type TestNode = { type: "test"; path: ConditionPath; field: FieldSpec; raw: unknown } & (
  | { op: "eq" | "ne"; value: Scalar }
  | { op: "in" | "not_in"; value: Scalar[] }
  | { op: "gt" | "gte" | "lt" | "lte"; value: bigint }
  | { op: "contains" | "starts_with"; value: string }
  | { op: "matches"; value: SafePattern }
  | { op: "exists"; value: boolean }
);

/** A checked condition: what both the compiler and the reference evaluator walk. */
export type ConditionNode =
  | { type: "all" | "any"; path: ConditionPath; children: ConditionNode[] }
  | { type: "not"; path: ConditionPath; child: ConditionNode }
  | { type: "always"; path: ConditionPath }
  | TestNode;

export type ParseResult = { ok: true; node: ConditionNode } | { ok: false; issues: ConditionIssue[] };

/**
 * A node's path, one array for every node at the same place in any rule: a daemon keeps the
 * parsed condition of each rule of each watch, and 10,000 rules `{ "args.value": { gte: … } }`
 * hold one ["args.value", "gte"]. Paths are never changed once made. Bounded by the places
 * a config's conditions have (past the bound a path is made, not kept).
 */
const PATHS = new Map<string, ConditionPath>();
const MAX_PATHS = 10_000;

function childPath(path: ConditionPath, key: string | number): ConditionPath {
  const id = JSON.stringify([...path, key]);
  const known = PATHS.get(id);
  if (known !== undefined) return known;
  const made = [...path, key];
  if (PATHS.size < MAX_PATHS) PATHS.set(id, made);
  return made;
}

/** Deep enough for any sensible rule; stops YAML alias cycles from recursing forever. */
const MAX_DEPTH = 32;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Checks a `when` and turns it into a tree with every value converted. Collects every
 * problem rather than stopping at the first, each with its path inside `when`. An absent
 * `when` matches every record of the source.
 */
export function parseCondition(when: unknown, context: ConditionContext): ParseResult {
  const issues: ConditionIssue[] = [];
  const node: ConditionNode = when === undefined ? { type: "always", path: [] } : parseNode(when, [], context, issues, 0);
  return issues.length ? { ok: false, issues } : { ok: true, node };
}

function parseNode(value: unknown, path: ConditionPath, context: ConditionContext, issues: ConditionIssue[], depth: number): ConditionNode {
  const placeholder: ConditionNode = { type: "always", path };
  if (depth > MAX_DEPTH) {
    issues.push({ path, message: `conditions nest more than ${MAX_DEPTH} levels deep` });
    return placeholder;
  }
  if (!isPlainObject(value)) {
    // JSON.stringify throws on a bigint (a caller's value, not YAML's): found by fuzzing.
    const got = Array.isArray(value) ? "a list (to require all of them, write all: [...])" : typeof value === "bigint" ? String(value) : (JSON.stringify(value) ?? String(value));
    issues.push({ path, message: `a condition is a map such as { status: Fail } or { all: [...] }, not ${got}` });
    return placeholder;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) {
    issues.push({ path, message: "an empty condition; name a field, or all / any / not" });
    return placeholder;
  }
  const parts = keys.map((key) => parseKey(key, value[key], childPath(path, key), context, issues, depth));
  // Several keys in one map must all hold.
  return parts.length === 1 ? (parts[0] as ConditionNode) : { type: "all", path, children: parts };
}

function parseKey(key: string, value: unknown, path: ConditionPath, context: ConditionContext, issues: ConditionIssue[], depth: number): ConditionNode {
  if (key === "all" || key === "any") {
    if (!Array.isArray(value) || value.length === 0) {
      issues.push({ path, message: `${key} takes a non-empty list of conditions` });
      return { type: "always", path };
    }
    return { type: key, path, children: value.map((child, i) => parseNode(child, childPath(path, i), context, issues, depth + 1)) };
  }
  if (key === "not") {
    return { type: "not", path, child: parseNode(value, path, context, issues, depth + 1) };
  }
  const resolved = resolveField(key, context);
  if (!resolved.ok) {
    issues.push({ path, message: resolved.message });
    return { type: "always", path };
  }
  const field = resolved.field;
  if (isPlainObject(value)) {
    const ops = Object.keys(value);
    if (ops.length === 0) {
      issues.push({ path, message: `no operator for ${key}; use one of ${OPERATORS_BY_KIND[field.kind].join(", ")}` });
      return { type: "always", path };
    }
    const tests = ops.map((op) => parseTest(field, op, value[op], childPath(path, op), issues));
    return tests.length === 1 ? (tests[0] as ConditionNode) : { type: "all", path, children: tests };
  }
  if (Array.isArray(value)) {
    issues.push({ path, message: `a list needs an operator: ${key}: { in: [...] }` });
    return { type: "always", path };
  }
  return parseTest(field, "eq", value, path, issues);
}

function parseTest(field: FieldSpec, op: string, raw: unknown, path: ConditionPath, issues: ConditionIssue[]): ConditionNode {
  const placeholder: ConditionNode = { type: "always", path };
  const allowed = OPERATORS_BY_KIND[field.kind];
  if (!(OPERATORS as readonly string[]).includes(op)) {
    issues.push({ path, message: `unknown operator "${op}"; ${field.name} takes ${allowed.join(", ")}` });
    return placeholder;
  }
  const operator = op as Operator;
  if (!allowed.includes(operator)) {
    issues.push({ path, message: `${field.name} does not take "${op}"; it takes ${allowed.join(", ")}` });
    return placeholder;
  }
  const bad = (message: string, at: ConditionPath = path): ConditionNode => {
    issues.push({ path: at, message: `${field.name}: ${message}` });
    return placeholder;
  };
  // A literal per node, not a spread of shared keys: spread objects take a hidden class of
  // their own in V8, and compiled rules keep their nodes for the life of the daemon.
  const test = <O extends Operator, V>(operator: O, value: V) => ({ type: "test" as const, path, field, raw, op: operator, value });
  switch (operator) {
    case "eq":
    case "ne": {
      const r = parseScalar(field, raw);
      return r.ok ? test(operator, r.value) : bad(r.message);
    }
    case "in":
    case "not_in": {
      if (!Array.isArray(raw) || raw.length === 0) return bad(`${op} takes a non-empty list of values`);
      const values: Scalar[] = [];
      let fine = true;
      raw.forEach((item, i) => {
        const r = parseScalar(field, item);
        if (r.ok) values.push(r.value);
        else {
          fine = false;
          bad(r.message, [...path, i]);
        }
      });
      return fine ? test(operator, values) : placeholder;
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const r = parseBound(field, raw, operator);
      return r.ok ? test(operator, r.value) : bad(r.message);
    }
    case "contains":
    case "starts_with":
      if (typeof raw !== "string" || raw === "") return bad(`${op} takes non-empty text`);
      return test(operator, raw);
    case "matches": {
      if (typeof raw !== "string" || raw === "") return bad("matches takes a regular expression as text");
      const r = compileSafePattern(raw);
      return r.ok ? test(operator, r.pattern) : bad(r.message);
    }
    case "exists":
      if (typeof raw !== "boolean") return bad("exists takes true or false");
      return test(operator, raw);
  }
}
