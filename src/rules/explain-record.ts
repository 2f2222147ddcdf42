import { formatKei } from "../chain/units.js";
import { formatTokenAmount } from "../chain/token-amounts.js";
import { cleanLine } from "../common/sanitize-text.js";
import type { WatchedRecord } from "../model/record.js";
import { evaluateParsedCondition } from "./evaluate-condition.js";
import type { ArgValue, Scalar } from "./operand.js";
import type { ConditionContext, ConditionNode, TestNode } from "./parse-condition.js";
import { MAX_MATCHED_TEXT } from "./safe-regexp.js";

/** One line of an explanation: a node of the condition, indented by its depth. */
export interface ExplainLine {
  depth: number;
  passed: boolean;
  text: string;
}

export interface RecordExplanation {
  matched: boolean;
  lines: ExplainLine[];
}

/**
 * Why a record matches a checked condition or not, node by node, from the reference
 * evaluator's trace (every node, no short-circuit): `amount 999.999999999999999999 KAIA <
 * 1000 KAIA`. A passing test shows the rule's operator, a failing one the relation that
 * holds instead. On-chain values are cut to one clean line.
 */
export function explainRecord(node: ConditionNode, record: WatchedRecord, context: ConditionContext): RecordExplanation {
  const { passed, trace } = evaluateParsedCondition(node, record, context);
  const lines: ExplainLine[] = [];
  let index = 0;
  // The trace lists the nodes in pre-order: walking the tree the same way pairs them up.
  const walk = (current: ConditionNode, depth: number): void => {
    const entry = trace[index++];
    if (entry === undefined) return;
    switch (current.type) {
      case "always":
        lines.push({ depth, passed: true, text: "no condition: every record of the source matches" });
        return;
      case "not":
        lines.push({ depth, passed: entry.passed, text: "not:" });
        walk(current.child, depth + 1);
        return;
      case "all":
      case "any":
        lines.push({ depth, passed: entry.passed, text: current.type === "all" ? "all of:" : "any of:" });
        for (const child of current.children) walk(child, depth + 1);
        return;
      case "test":
        lines.push({ depth, passed: entry.passed, text: describeTest(current, entry.actual, entry.passed) });
        return;
    }
  };
  walk(node, 0);
  if (record.family !== context.family) lines.unshift({ depth: 0, passed: false, text: `a ${record.family} record; the rule reads ${context.family}` });
  return { matched: passed, lines };
}

const RELATION: Record<string, [string, string]> = {
  eq: ["=", "!="],
  ne: ["!=", "="],
  gt: [">", "<="],
  gte: [">=", "<"],
  lt: ["<", ">="],
  lte: ["<=", ">"],
  in: ["in", "not in"],
  not_in: ["not in", "in"],
  contains: ["contains", "does not contain"],
  starts_with: ["starts with", "does not start with"],
  matches: ["matches", "does not match"],
};

function describeTest(node: TestNode, actual: unknown, passed: boolean): string {
  const field = node.field.name;
  if (node.op === "exists") {
    const present = actual !== undefined && actual !== null;
    return `${field} ${present ? `is present (${showActual(node, actual)})` : "is absent"}${passed ? "" : `; the rule wants it ${node.value ? "present" : "absent"}`}`;
  }
  const [holds, fails] = RELATION[node.op] ?? [node.op, `not ${node.op}`];
  const expected = showExpected(node);
  const written = typeof node.raw === "string" && node.field.operand !== undefined && node.raw.toLowerCase() !== expected.toLowerCase() ? ` (${cleanLine(node.raw, 80)})` : "";
  const text = typeof actual === "string" ? actual : (actual as ArgValue | undefined)?.text;
  const cut = node.op === "matches" && text !== undefined && text.length > MAX_MATCHED_TEXT ? ` (in its first ${MAX_MATCHED_TEXT.toLocaleString("en-US")} of ${text.length.toLocaleString("en-US")} characters, all a pattern reads)` : "";
  return `${field} ${showActual(node, actual)} ${passed ? holds : fails} ${expected}${written}${cut}`;
}

function showActual(node: TestNode, actual: unknown): string {
  if (actual === undefined || actual === null) return "(absent)";
  if (node.field.kind === "amount" && node.field.token !== undefined && typeof actual === "bigint") return tokenAmount(node, actual);
  if (node.field.kind === "amount") return `${cleanLine(String(actual), 80)} KAIA`;
  if (node.field.kind === "text" || (node.field.kind === "arg" && typeof actual === "string" && !/^(-?\d+|0x[0-9a-fA-F]*)$/.test(actual))) {
    return JSON.stringify(cleanLine(String(actual), 80));
  }
  return cleanLine(typeof actual === "object" ? JSON.stringify(actual) : String(actual), 80);
}

function showExpected(node: TestNode): string {
  // Keywords compare lowercase; the rule's own spelling (Fail, CREATE) reads better.
  if (node.field.kind === "keyword") {
    const raw = node.raw;
    if (typeof raw === "string") return raw;
    if (Array.isArray(raw)) return `[${raw.map(String).join(", ")}]`;
  }
  switch (node.op) {
    case "in":
    case "not_in":
      return `[${node.value.map((v) => showScalar(node, v)).join(", ")}]`;
    case "matches":
      return String(node.value);
    case "contains":
    case "starts_with":
      return JSON.stringify(node.value);
    case "exists":
      return String(node.value);
    default:
      return showScalar(node, node.value);
  }
}

function showScalar(node: TestNode, value: Scalar): string {
  if (typeof value === "bigint" && node.field.kind === "amount" && node.field.token !== undefined) return tokenAmount(node, value);
  if (typeof value === "bigint") return node.field.kind === "amount" ? `${formatKei(value)} KAIA` : value.toString();
  if (typeof value === "object") return (value as ArgValue).text;
  if (typeof value === "string" && node.field.kind === "text") return JSON.stringify(value);
  return String(value);
}

/**
 * A token watch's amount in its token's units and symbol (flattened, cut: on-chain text). A
 * bound in another token's symbol was compiled to one no amount passes: shown as such.
 */
function tokenAmount(node: TestNode, value: bigint): string {
  const info = node.field.token?.info;
  if (info === undefined) return `${value} base units`;
  if (value < 0n || value >= 2n ** 256n) return "(an amount of another token)";
  const symbol = info.symbol === undefined ? "tokens" : cleanLine(info.symbol, 24);
  return `${formatTokenAmount(value, info.decimals)} ${symbol}`;
}
