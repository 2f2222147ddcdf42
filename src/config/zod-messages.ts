import type { z } from "zod";
import { didYouMean } from "./suggest.js";

type RawIssue = z.core.$ZodRawIssue;

function describeValue(value: unknown): string {
  if (value === null) return "null (an empty value)";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  if (typeof value === "string") return `a string`;
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a number";
  if (typeof value === "boolean") return String(value);
  return typeof value;
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "a list",
  object: "a map",
  record: "a map",
};

function bound(issue: { origin: string; inclusive?: boolean }, value: number | bigint, side: "min" | "max"): string {
  const n = String(value);
  if (issue.origin === "array") return side === "min" ? (n === "1" ? "must not be empty" : `needs at least ${n} items`) : `has more than ${n} items`;
  if (issue.origin === "string") return side === "min" ? (n === "1" ? "must not be empty" : `needs at least ${n} characters`) : `is longer than ${n} characters`;
  const op = side === "min" ? (issue.inclusive === false ? ">" : ">=") : issue.inclusive === false ? "<" : "<=";
  return `must be ${op} ${n}`;
}

/**
 * Short, plain messages for zod's issues (a message never repeats the value, which may
 * be a secret). Unknown keys are recorded with the keys the object does accept, so that
 * each one can be reported at its own line with a suggestion.
 */
export function createErrorMap() {
  const knownKeys = new Map<string, string[]>();
  const map = (issue: RawIssue): string | undefined => {
    switch (issue.code) {
      case "invalid_type":
        if (issue.input === undefined) return "required";
        return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${describeValue(issue.input)}`;
      case "too_small":
        return bound(issue, issue.minimum, "min");
      case "too_big":
        return bound(issue, issue.maximum, "max");
      case "invalid_value": {
        const allowed = issue.values as readonly unknown[];
        const values = allowed.map((v) => JSON.stringify(v));
        const hint = typeof issue.input === "string" ? didYouMean(issue.input, allowed.map(String)) : "";
        return values.length === 1 ? `must be ${values[0] ?? ""}` : `must be one of ${values.join(", ")}${hint}`;
      }
      case "invalid_union":
        if (typeof issue.discriminator === "string") {
          const options = ((issue.options ?? []) as readonly unknown[]).map(String);
          const given = (issue.input as Record<string, unknown> | undefined)?.[issue.discriminator];
          if (given === undefined) return `required: one of ${options.join(", ")}`;
          return `unknown ${issue.discriminator} ${JSON.stringify(given)}${typeof given === "string" ? didYouMean(given, options) : ""}: one of ${options.join(", ")}`;
        }
        return undefined;
      case "invalid_key":
        return issue.issues[0]?.message;
      case "unrecognized_keys": {
        const shape = (issue.inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
        knownKeys.set(JSON.stringify(issue.path ?? []), Object.keys(shape ?? {}));
        return "unknown key";
      }
      default:
        return undefined;
    }
  };
  return { map, knownKeys };
}
