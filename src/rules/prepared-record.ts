import type { AnyFamily } from "../families/define-family.js";
import { argValue, lower, type ArgValue, type PreparedValue } from "../families/record-values.js";
import { familyOf } from "../families/registry.js";
import { directionOfLower } from "../families/shared-fields.js";
import type { WatchedRecord } from "../model/record.js";

export type { PreparedValue };

/**
 * A record whose values a condition compares are read in comparable form (lowercase
 * addresses and hashes, bigint amounts and integers, derived flags), each the first time
 * a rule asks for it and then kept: fifty rules cost one parse of the amount, and a value
 * no rule reads costs nothing. Most records meet only the few rules that the rule index
 * (rule-index.ts) cannot rule out, so reading everything up front was most of the cost.
 *
 * What each value is comes from the record's family definition (src/families/): a field's
 * `prepare`, at the slot the definition numbered it (FieldSpec.slot). A slot number rather
 * than a named property because the compiled comparison closures are shared code: one
 * method call with a captured index stays monomorphic for every field.
 */
export class PreparedRecord {
  private current: WatchedRecord;
  private family: AnyFamily;
  /** Indexed by slot; valid where the bit of `known` is set. */
  private readonly values: PreparedValue[];
  private known: number;
  /** Lowercase topics 0–3 of an event log, valid where the bit of `knownTopics` is set. */
  private readonly topics: (string | undefined)[];
  private knownTopics: number;
  /** Parallel to a record's decoded arguments (the first 31), valid where the bit of `knownArgs` is set. */
  private readonly args: (ArgValue | undefined)[];
  private knownArgs: number;

  constructor(record: WatchedRecord) {
    this.current = record;
    this.family = familyOf(record.family);
    this.known = 0;
    this.knownTopics = 0;
    this.knownArgs = 0;
    this.topics = [undefined, undefined, undefined, undefined];
    this.args = [];
    // A literal of the full length (a family has at most 32 slots) keeps the array packed (no holes) for fast element loads.
    this.values = [undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined,
      undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined,
      undefined, undefined, undefined, undefined, undefined, undefined];
  }

  get record(): WatchedRecord {
    return this.current;
  }

  /** Forgets every value read and moves on to another record, reusing the storage. */
  load(record: WatchedRecord): void {
    if (record.family !== this.current.family) this.family = familyOf(record.family);
    this.current = record;
    this.known = 0;
    this.knownTopics = 0;
    this.knownArgs = 0;
  }

  /** The prepared value at a slot (undefined when the field does not apply or is absent). */
  value(slot: number): PreparedValue {
    const bit = 1 << slot;
    if ((this.known & bit) === 0) {
      const prepare = this.family.preparers[slot];
      this.values[slot] = prepare === undefined ? undefined : prepare(this.current);
      this.known |= bit;
    }
    return this.values[slot];
  }

  /** in, out or self: the record's `from` and `to` relative to the watched accounts (lowercase). */
  direction(accounts: ReadonlySet<string> | undefined): PreparedValue {
    const slots = this.family.slots;
    const from = slots.from === undefined ? undefined : this.value(slots.from);
    const to = slots.to === undefined ? undefined : this.value(slots.to);
    return directionOfLower(from as string | undefined, to as string | undefined, accounts);
  }

  /** Topic i as received. */
  rawTopic(i: number): string | undefined {
    return this.family.topics?.(this.current)[i];
  }

  /** Topic i, lowercase. */
  topic(i: number): string | undefined {
    const topics = this.family.topics;
    if (topics === undefined) return undefined;
    // Conditions name topics 0 to 3 only (a log has no more).
    if (i > 3) return lower(topics(this.current)[i]);
    const bit = 1 << i;
    if ((this.knownTopics & bit) === 0) {
      this.topics[i] = lower(topics(this.current)[i]);
      this.knownTopics |= bit;
    }
    return this.topics[i];
  }

  /** A decoded argument's text by name (the first one, should a name repeat). */
  argText(name: string): string | undefined {
    const items = this.family.args?.(this.current);
    if (items === undefined) return undefined;
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as (typeof items)[number];
      if (item.name === name) return item.value;
    }
    return undefined;
  }

  /** A decoded event (or transaction) argument by name (the first one, should a name repeat). */
  arg(name: string): ArgValue | undefined {
    const items = this.family.args?.(this.current);
    if (items === undefined) return undefined;
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as (typeof items)[number];
      if (item.name !== name) continue;
      if (i > 30) return argValue(item.value);
      const bit = 1 << i;
      if ((this.knownArgs & bit) === 0) {
        this.args[i] = argValue(item.value);
        this.knownArgs |= bit;
      }
      return this.args[i];
    }
    return undefined;
  }

  /**
   * The text as received that a text slot is read from: its prepared value is this text,
   * or this text lowered for case-insensitive fields. Undefined for other slots.
   */
  rawText(slot: number): string | undefined {
    const raw = this.family.rawTexts[slot];
    return raw === undefined ? undefined : raw(this.current);
  }
}

let lastRecord: WatchedRecord | undefined;
let shared: PreparedRecord | undefined;

/**
 * The prepared form of a record when rules are evaluated record by record (the engine's
 * order): the rule index and every rule of a source share one preparation of the current
 * record. The answer is one shared object, reloaded for the next record, so that a scan
 * allocates nothing here per record (each allocation brings the next young-generation GC
 * closer, and every GC copies the live page): use it at once, and build `new
 * PreparedRecord(record)` to keep one. A WeakMap cache was measured before and rejected:
 * with 100,000 live records its upkeep in the GC cost more than the evaluations. Records
 * are treated as immutable.
 */
export function prepareRecord(record: WatchedRecord): PreparedRecord {
  if (shared === undefined) shared = new PreparedRecord(record);
  else if (record !== lastRecord) shared.load(record);
  lastRecord = record;
  return shared;
}
