import { ZERO_ADDRESS, isBurnAddress } from "../chain/address.js";
import { decodeTokenTransfer } from "../chain/token-transfer.js";
import { KaiawatchError } from "../common/errors.js";
import type { WatchedRecord } from "../model/record.js";
import type { FieldSpec } from "./fields.js";
import type { ArgValue, Scalar } from "./operand.js";
import { argValue } from "./operand.js";
import type { ConditionContext, ConditionIssue, ConditionNode, ConditionPath, TestNode } from "./parse-condition.js";
import { parseCondition } from "./parse-condition.js";
import { amountKeiOf, integerOf } from "./record-values.js";

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
  const passed = record.family === context.family && evaluateNode(node, record, trace);
  return { passed, trace };
}

function evaluateNode(node: ConditionNode, record: WatchedRecord, trace: TraceEntry[]): boolean {
  switch (node.type) {
    case "always":
      trace.push({ path: node.path, op: "always", passed: true });
      return true;
    case "not": {
      const entry: TraceEntry = { path: node.path, op: "not", passed: false };
      trace.push(entry);
      entry.passed = !evaluateNode(node.child, record, trace);
      return entry.passed;
    }
    case "all":
    case "any": {
      const entry: TraceEntry = { path: node.path, op: node.type, passed: false };
      trace.push(entry);
      const results = node.children.map((child) => evaluateNode(child, record, trace));
      entry.passed = node.type === "all" ? results.every(Boolean) : results.some(Boolean);
      return entry.passed;
    }
    case "test": {
      const actual = readField(record, node.field);
      const passed = applyTest(node, normalize(node.field, actual));
      trace.push({ path: node.path, op: node.op, field: node.field.name, expected: node.raw, actual, passed });
      return passed;
    }
  }
}

/** The record's value of a field, as received (or derived from received values). */
export function readField(record: WatchedRecord, field: FieldSpec): unknown {
  switch (record.family) {
    case "event_logs": {
      const d = record.data;
      switch (field.id) {
        case "contract": return d.contract_address;
        case "signature": return d.topics[0];
        case "event": return d.type;
        case "topics": return d.topics[field.index ?? 0];
        case "args": return d.items.find((item) => item.name === field.arg)?.value;
        case "block": return record.block;
        case "transaction": return record.transactionHash;
        case "log_index": return d.log_index;
        case "estimated": return d.estimated_event_log === true;
        case "from": return decodeTokenTransfer(d)?.from;
        case "to": return decodeTokenTransfer(d)?.to;
        case "amount": return decodeTokenTransfer(d)?.value;
        case "token": return d.contract_address;
        case "direction": {
          const transfer = decodeTokenTransfer(d);
          if (transfer === undefined) return undefined;
          const from = transfer.from === field.account;
          const to = transfer.to === field.account;
          return from && to ? "self" : from ? "out" : to ? "in" : undefined;
        }
      }
      break;
    }
    case "nft_transfers": {
      const d = record.data;
      switch (field.id) {
        case "contract": return d.contract.contract_address;
        case "contract_type": return d.contract.contract_type;
        case "token_id": return d.token_id;
        case "from": return d.from;
        case "to": return d.to;
        case "token_count": return d.token_count;
        case "direction": {
          const from = d.from.toLowerCase() === field.account;
          const to = d.to?.toLowerCase() === field.account;
          return from && to ? "self" : from ? "out" : to ? "in" : undefined;
        }
        case "mint": return d.from.toLowerCase() === ZERO_ADDRESS;
        case "burn": return d.to === undefined || isBurnAddress(d.to);
        case "block": return record.block;
        case "transaction": return record.transactionHash;
      }
      break;
    }
    case "internal_transactions": {
      const d = record.data;
      switch (field.id) {
        case "type": return d.type;
        case "from": return d.from;
        case "to": return d.to;
        case "amount": return d.amount;
        case "status": return d.transaction_status?.status;
        case "failed": return Boolean(d.error) || d.transaction_status?.status.toLowerCase() === "fail";
        case "error": return d.error;
        case "fail_message": return d.transaction_status?.fail_message;
        case "method_id": return d.method_id;
        case "signature": return d.signature;
        case "call_id": return d.call_id;
        case "block": return record.block;
        case "transaction": return record.transactionHash;
      }
      break;
    }
    case "transactions": {
      const d = record.data;
      switch (field.id) {
        case "from": return d.from;
        case "to": return d.to;
        case "amount": return d.value;
        case "direction": {
          const from = d.from === field.account;
          const to = d.to === field.account;
          return from && to ? "self" : from ? "out" : to ? "in" : undefined;
        }
        case "status": return d.status;
        case "failed": return d.status === "Fail";
        case "error": return d.error;
        case "revert_reason": return d.revert_reason;
        case "method_id": return d.method_id;
        case "method": return d.method;
        case "args": return d.args?.find((a) => a.name === field.arg)?.value;
        case "type": return d.type;
        case "type_int": return d.type_int;
        case "fee_payer": return d.fee_payer;
        case "fee_delegated": return d.fee_payer !== undefined;
        case "fee": return d.fee;
        case "gas_used": return d.gas_used;
        case "index": return d.transaction_index;
        case "block": return record.block;
        case "transaction": return record.transactionHash;
      }
      break;
    }
  }
  return undefined;
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
