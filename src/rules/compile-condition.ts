import type { RecordFamily, WatchedRecord } from "../model/record.js";
import type { FieldSpec } from "../families/field-kinds.js";
import type { ArgValue } from "./operand.js";
import type { ConditionContext, ConditionIssue, ConditionNode, TestNode } from "./parse-condition.js";
import { parseCondition } from "./parse-condition.js";
import type { PreparedRecord, PreparedValue } from "./prepared-record.js";
import { prepareRecord } from "./prepared-record.js";

/** The watched accounts (lowercase) a condition's `direction` is relative to. */
export type WatchedAccounts = ReadonlySet<string> | undefined;

export type PreparedTest = (record: PreparedRecord, accounts: WatchedAccounts) => boolean;

export interface CompiledCondition {
  ok: true;
  /**
   * True when the record matches; `direction` is relative to `accounts` (the watch's, given
   * here rather than kept, so that the rules of many watches share one compiled condition:
   * compile-config.ts). A record of another family never matches.
   */
  test: (record: WatchedRecord, accounts?: WatchedAccounts) => boolean;
  /** The checked tree, for explain and the reference evaluator. */
  node: ConditionNode;
}

export type CompileResult = CompiledCondition | { ok: false; issues: ConditionIssue[] };

/**
 * Checks a `when` against the rule's source and compiles it, once, into closures that
 * only compare precomputed values: no parsing, lowercasing or unit conversion happens per
 * record. `all`/`any` short-circuit in the order written, except that a regular expression
 * runs after its siblings (see byCost). Called by the config's compile
 * (config/compile-config.ts), once per distinct `when` and context, however many rules write it;
 * everything else reads its result.
 */
export function compileCondition(when: unknown, context: ConditionContext): CompileResult {
  const parsed = parseCondition(when, context);
  if (!parsed.ok) return parsed;
  const testPrepared = compileNode(parsed.node);
  const family: RecordFamily = context.family;
  const test = (record: WatchedRecord, accounts?: WatchedAccounts): boolean => record.family === family && testPrepared(prepareRecord(record), accounts);
  return { ok: true, test, node: parsed.node };
}

function compileNode(node: ConditionNode): PreparedTest {
  switch (node.type) {
    case "always":
      return () => true;
    case "not": {
      const child = compileNode(node.child);
      return (p, a) => !child(p, a);
    }
    case "all":
    case "any": {
      const children = byCost(node.children).map(compileNode);
      if (children.length === 1) return children[0] as PreparedTest;
      if (children.length === 2) {
        const [a, b] = children as [PreparedTest, PreparedTest];
        return node.type === "all" ? (p, x) => a(p, x) && b(p, x) : (p, x) => a(p, x) || b(p, x);
      }
      if (node.type === "all") {
        return (p, a) => {
          for (let i = 0; i < children.length; i++) if (!(children[i] as PreparedTest)(p, a)) return false;
          return true;
        };
      }
      return (p, a) => {
        for (let i = 0; i < children.length; i++) if ((children[i] as PreparedTest)(p, a)) return true;
        return false;
      };
    }
    case "test":
      return node.field.kind === "arg" ? compileArgTest(node) : compileValueTest(node);
  }
}

/**
 * Siblings with a regular expression in them after the others, each group in the order
 * written: a `matches` (re2js, linear time but interpreted) costs tens of times a comparison
 * of prepared values, and `{ fail_message: { matches: ... }, amount: { gt: ... } }` should
 * not pay it on every record whose amount already says no. The outcome is the same in any
 * order, as no test has an effect or can fail.
 */
function byCost(children: readonly ConditionNode[]): readonly ConditionNode[] {
  const costly = children.filter(hasPattern);
  return costly.length === 0 || costly.length === children.length ? children : [...children.filter((c) => !hasPattern(c)), ...costly];
}

function hasPattern(node: ConditionNode): boolean {
  switch (node.type) {
    case "all":
    case "any":
      return node.children.some(hasPattern);
    case "not":
      return hasPattern(node.child);
    case "always":
      return false;
    case "test":
      return node.op === "matches";
  }
}

type Getter = (p: PreparedRecord, accounts: WatchedAccounts) => PreparedValue;

/** The slot of a field whose prepared value is stored, or undefined for computed ones (its family's definition numbers them). */
export function slotOf(field: FieldSpec): number | undefined {
  return field.slot;
}

/** Reads a field that is not a plain slot: a topic by index, or direction (relative to the watched account). */
function getter(field: FieldSpec): Getter {
  if (field.id === "topics") {
    const i = field.index ?? 0;
    return (p) => p.topic(i);
  }
  if (field.id === "direction") return (p, accounts) => p.direction(accounts);
  throw new Error(`no prepared value for field ${field.name}`);
}

function compileValueTest(node: TestNode): PreparedTest {
  const slot = slotOf(node.field);
  return slot === undefined ? compileGetterTest(node, getter(node.field)) : compileSlotTest(node, slot);
}

// The two functions below are the same comparisons; the slot form loads the value inline
// (one call per comparison), the getter form calls a reader first.

function compileSlotTest(node: TestNode, i: number): PreparedTest {
  switch (node.op) {
    case "eq": {
      const x = node.value;
      return (p) => p.value(i) === x;
    }
    case "ne": {
      const x = node.value;
      return (p) => p.value(i) !== x;
    }
    case "in": {
      const set = new Set<unknown>(node.value);
      return (p) => set.has(p.value(i));
    }
    case "not_in": {
      const set = new Set<unknown>(node.value);
      return (p) => !set.has(p.value(i));
    }
    // undefined compares false with a bigint, so a missing value never passes a bound.
    case "gt": {
      const x = node.value;
      return (p) => (p.value(i) as bigint) > x;
    }
    case "gte": {
      const x = node.value;
      return (p) => (p.value(i) as bigint) >= x;
    }
    case "lt": {
      const x = node.value;
      return (p) => (p.value(i) as bigint) < x;
    }
    case "lte": {
      const x = node.value;
      return (p) => (p.value(i) as bigint) <= x;
    }
    case "contains": {
      const x = node.value;
      return (p) => {
        const v = p.value(i);
        return typeof v === "string" && v.includes(x);
      };
    }
    case "starts_with": {
      const x = node.value;
      return (p) => {
        const v = p.value(i);
        return typeof v === "string" && v.startsWith(x);
      };
    }
    case "matches": {
      const re = node.value;
      return (p) => {
        const v = p.value(i);
        return typeof v === "string" && re.test(v);
      };
    }
    case "exists":
      return node.value ? (p) => p.value(i) !== undefined : (p) => p.value(i) === undefined;
  }
}

function compileGetterTest(node: TestNode, get: Getter): PreparedTest {
  switch (node.op) {
    case "eq": {
      const x = node.value;
      return (p, a) => get(p, a) === x;
    }
    case "ne": {
      const x = node.value;
      return (p, a) => get(p, a) !== x;
    }
    case "in": {
      const set = new Set<unknown>(node.value);
      return (p, a) => set.has(get(p, a));
    }
    case "not_in": {
      const set = new Set<unknown>(node.value);
      return (p, a) => !set.has(get(p, a));
    }
    case "gt": {
      const x = node.value;
      return (p, a) => (get(p, a) as bigint) > x;
    }
    case "gte": {
      const x = node.value;
      return (p, a) => (get(p, a) as bigint) >= x;
    }
    case "lt": {
      const x = node.value;
      return (p, a) => (get(p, a) as bigint) < x;
    }
    case "lte": {
      const x = node.value;
      return (p, a) => (get(p, a) as bigint) <= x;
    }
    case "contains": {
      const x = node.value;
      return (p, a) => {
        const v = get(p, a);
        return typeof v === "string" && v.includes(x);
      };
    }
    case "starts_with": {
      const x = node.value;
      return (p, a) => {
        const v = get(p, a);
        return typeof v === "string" && v.startsWith(x);
      };
    }
    case "matches": {
      const re = node.value;
      return (p, a) => {
        const v = get(p, a);
        return typeof v === "string" && re.test(v);
      };
    }
    case "exists":
      return node.value ? (p, a) => get(p, a) !== undefined : (p, a) => get(p, a) === undefined;
  }
}

function argEquals(a: ArgValue, b: ArgValue): boolean {
  if (a.int !== undefined && b.int !== undefined) return a.int === b.int;
  if (a.hex !== undefined && b.hex !== undefined) return a.hex === b.hex;
  return a.text === b.text;
}

function compileArgTest(node: TestNode): PreparedTest {
  const name = node.field.arg as string;
  const eqAny = (values: ArgValue[]) => (p: PreparedRecord) => {
    const v = p.arg(name);
    if (v === undefined) return false;
    for (let i = 0; i < values.length; i++) if (argEquals(v, values[i] as ArgValue)) return true;
    return false;
  };
  switch (node.op) {
    case "eq":
      return eqAny([node.value as ArgValue]);
    case "in":
      return eqAny(node.value as ArgValue[]);
    case "ne": {
      const eq = eqAny([node.value as ArgValue]);
      return (p) => !eq(p);
    }
    case "not_in": {
      const eq = eqAny(node.value as ArgValue[]);
      return (p) => !eq(p);
    }
    case "gt": {
      const x = node.value;
      return (p) => (p.arg(name)?.int as bigint) > x;
    }
    case "gte": {
      const x = node.value;
      return (p) => (p.arg(name)?.int as bigint) >= x;
    }
    case "lt": {
      const x = node.value;
      return (p) => (p.arg(name)?.int as bigint) < x;
    }
    case "lte": {
      const x = node.value;
      return (p) => (p.arg(name)?.int as bigint) <= x;
    }
    case "contains": {
      const x = node.value;
      return (p) => p.arg(name)?.text.includes(x) === true;
    }
    case "starts_with": {
      const x = node.value;
      return (p) => p.arg(name)?.text.startsWith(x) === true;
    }
    case "matches": {
      const re = node.value;
      return (p) => {
        const v = p.arg(name);
        return v !== undefined && re.test(v.text);
      };
    }
    case "exists":
      return node.value ? (p) => p.arg(name) !== undefined : (p) => p.arg(name) === undefined;
  }
}
