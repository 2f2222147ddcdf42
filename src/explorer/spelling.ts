import { DOCUMENTED_RECORDS, PAGING, type RecordFields } from "./drift.js";
import type { OperationName } from "./operations.js";
import { ShapeError, type Rec } from "./shape.js";

/**
 * How an answer spells its field names. The predecessor's server (klaytn/finder-api) writes
 * snake_case (its Jackson naming strategy, module-open-api application-web.yml), as
 * explorer-api.md does; KaiaScan's live documentation shows every answer in camelCase
 * (`logIndex`, `totalCount`, `transactionStatus.failMessage`). Both are read alike: a
 * camelCase answer has its documented fields renamed to snake_case before the checks, which
 * stay as strict about each value as they are.
 */
export type FieldSpelling = "snake_case" | "camelCase";
export const FIELD_SPELLINGS: readonly FieldSpelling[] = ["snake_case", "camelCase"];

/** `transaction_status` → `transactionStatus`. */
export const camelCaseOf = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** camelCase name → snake_case name, for the names whose spellings differ. */
type Renames = ReadonlyMap<string, string>;

interface RecordRenames {
  own: Renames;
  nested: ReadonlyMap<string, Renames>;
}

function renamesOf(names: ReadonlySet<string>): Renames {
  return new Map([...names].map((name) => [camelCaseOf(name), name] as const).filter(([camel, snake]) => camel !== snake));
}

const PAGING_RENAMES = renamesOf(PAGING);

function recordRenamesOf(fields: RecordFields): RecordRenames {
  return { own: renamesOf(fields.own), nested: new Map(Object.entries(fields.nested ?? {}).map(([key, names]) => [key, renamesOf(names)])) };
}

const RENAMES = Object.fromEntries(Object.entries(DOCUMENTED_RECORDS).map(([operation, fields]) => [operation, recordRenamesOf(fields)])) as Record<OperationName, RecordRenames>;

const isObject = (value: unknown): value is Rec => typeof value === "object" && value !== null && !Array.isArray(value);

function spellsCamel(o: unknown, renames: Renames): boolean {
  if (!isObject(o)) return false;
  for (const key in o) if (renames.has(key)) return true;
  return false;
}

/**
 * The spelling of a parsed answer, from its paging and its first record (or the object, for
 * an answer that is one record): a few key lookups per page, whatever its size, so that the
 * snake_case answers of the hot path cost nothing per record. A server writes one spelling.
 */
export function spellingOf(operation: OperationName, body: unknown, list: boolean): FieldSpelling {
  if (!isObject(body)) return "snake_case";
  if (!list) return spellsCamel(body, RENAMES[operation].own) ? "camelCase" : "snake_case";
  const first = Array.isArray(body.results) ? (body.results[0] as unknown) : undefined;
  return spellsCamel(body.paging, PAGING_RENAMES) || spellsCamel(first, RENAMES[operation].own) ? "camelCase" : "snake_case";
}

/** A copy of `o`, keys in their order, with the camelCase names renamed; a field written in both spellings is refused (which value would be meant?). */
function renamed(o: Rec, renames: Renames, nested?: ReadonlyMap<string, Renames>): Rec {
  const out: Rec = {};
  for (const key in o) {
    const snake = renames.get(key);
    if (snake !== undefined && Object.hasOwn(o, snake)) {
      const error = new ShapeError(`written in both spellings, ${snake} and ${key}`, `{${snake},${key}}`);
      error.path.push(`.${snake}`);
      throw error;
    }
    const name = snake ?? key;
    const value = o[key];
    const inner = nested?.get(name);
    out[name] = inner !== undefined && isObject(value) ? withPath(name, () => renamed(value, inner)) : value;
  }
  return out;
}

function withPath<T>(key: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof ShapeError) error.path.unshift(`.${key}`);
    throw error;
  }
}

/** A camelCase answer with its documented fields (paging, records, the nested objects read) renamed to snake_case; `property` and anything undocumented as received. */
export function toSnakeCase(operation: OperationName, body: unknown, list: boolean): unknown {
  if (!isObject(body)) return body;
  const { own, nested } = RENAMES[operation];
  if (!list) return renamed(body, own, nested);
  const page: Rec = { ...body };
  if (isObject(body.paging)) page.paging = withPath("paging", () => renamed(body.paging as Rec, PAGING_RENAMES));
  if (Array.isArray(body.results)) {
    page.results = body.results.map((record: unknown, i: number) => (isObject(record) ? withPath(`results[${i}]`, () => renamed(record, own, nested)) : record));
  }
  return page;
}
