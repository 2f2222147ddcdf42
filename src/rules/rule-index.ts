import type { WatchedRecord } from "../model/record.js";
import { slotOf } from "./compile-condition.js";
import type { FieldKind, FieldSpec } from "../families/field-kinds.js";
import type { ArgValue, Scalar } from "./operand.js";
import type { ConditionNode } from "./parse-condition.js";
import { prepareRecord } from "./prepared-record.js";

/** Anything with a record test: a compiled rule, or a hand-made one (which is never skipped). */
export interface IndexedRule {
  test(record: WatchedRecord): boolean;
  /** The parsed condition behind `test`; a rule without one is never skipped. */
  condition?: ConditionNode;
}

export interface RuleIndex<R extends IndexedRule> {
  /**
   * The rules that may match the record, in their original order: every rule the index
   * cannot rule out. A superset of the matching rules; callers still run each `test`.
   */
  candidates(record: WatchedRecord): readonly R[];
}

/** Where a requirement reads the record: a prepared slot, a topic, or an event argument. */
type Place = { kind: "slot"; slot: number } | { kind: "topic"; index: number } | { kind: "arg"; name: string; integers: boolean };

/** "The record's value at `place` equals `value`" (with the comparison the compiled test uses). */
interface Requirement {
  place: Place;
  placeKey: string;
  fieldId: string;
  fieldKind: FieldKind;
  value: Scalar;
}

interface Entry<R> {
  /** The rules indexed under this value, ascending. */
  rules: number | number[];
  /** Those rules and the unindexed ones, in rule order: the answer when this entry is the only hit. */
  merged: R[];
}

/**
 * What a value is filed under: the number of its one rule when no rule is unindexed (a
 * value is most often one watch's, and a daemon of 100,000 watches holds one per value:
 * a number costs the map's slot only), else an entry.
 */
type Filed<R> = number | Entry<R>;

interface Lookup<R> {
  place: Place;
  values: Map<unknown, Filed<R>>;
  /** The tails (see tailOf) of every text key: a text whose tail is not here matches none. */
  tails: Uint32Array;
}

export interface RuleIndexOptions {
  /**
   * Fewer rules than this are all run on every record, without an index: looking a value
   * up costs about what a rule's own comparison does, and a daemon of 10,000 sources with
   * a rule or two each should not hold 10,000 indexes. Default 4.
   */
  minRules?: number;
}

/**
 * A rule's condition often requires a value that most records do not have: `from:
 * 0x…`, `to: { in: [...] }`, `args.to: 0x…`, or such a test inside an `all`. Such a
 * rule cannot match a record without that value, so it is filed under the value, and a
 * record meets only the rules filed under its own values plus the rules that require no
 * value. With fifty rules watching fifty accounts, a record meets one or two instead of
 * fifty. The matches and their order are unchanged: this only skips rules whose
 * condition is certain to be false.
 */
export function createRuleIndex<R extends IndexedRule>(rules: readonly R[], options: RuleIndexOptions = {}): RuleIndex<R> {
  const all = [...rules];
  if (rules.length < (options.minRules ?? 4)) return { candidates: () => all };
  const lookups = new Map<string, Lookup<R>>();
  const unindexed: number[] = [];
  rules.forEach((rule, i) => {
    const node = rule.condition;
    const requirements = node === undefined ? undefined : requirementsOf(node);
    if (requirements === undefined) {
      unindexed.push(i);
      return;
    }
    for (const requirement of requirements) {
      let lookup = lookups.get(requirement.placeKey);
      if (lookup === undefined) lookups.set(requirement.placeKey, (lookup = { place: requirement.place, values: new Map(), tails: new Uint32Array(TAILS / 32) }));
      if (lookup.place.kind === "arg" && (requirement.value as ArgValue).int !== undefined) lookup.place.integers = true;
      for (const key of keysOf(requirement)) {
        if (typeof key === "string") {
          const tail = tailOf(key);
          // A key with other than ASCII at its end: let every text through.
          if (tail === -1) lookup.tails.fill(0xffffffff);
          else lookup.tails[tail >>> 5]! |= 1 << (tail & 31);
        }
        const filed = lookup.values.get(key);
        if (filed === undefined) lookup.values.set(key, i);
        // A literal of two: an array pushed to from empty is given room for seventeen.
        else if (typeof filed === "number") {
          if (filed !== i) lookup.values.set(key, { rules: [filed, i], merged: [] });
        } else {
          // While the index is built an entry's rules are a list: one rule is filed as its number.
          const list = filed.rules as number[];
          if (list[list.length - 1] !== i) list.push(i);
        }
      }
    }
  });
  if (lookups.size === 0) return { candidates: () => all };
  for (const { values } of lookups.values()) {
    for (const [key, filed] of values) {
      // With rules unindexed, a value of one rule answers it beside them: an entry too.
      if (typeof filed === "number") {
        if (unindexed.length > 0) values.set(key, { rules: filed, merged: mergedOf([filed], unindexed, rules) });
      } else filed.merged = mergedOf(filed.rules as number[], unindexed, rules);
    }
  }
  return new IndexedRules(all, unindexed, [...lookups.values()]);
}

/** The rules of `indexed` and `unindexed` (each ascending), in rule order, once each. */
function mergedOf<R>(indexed: readonly number[], unindexed: readonly number[], rules: readonly R[]): R[] {
  return [...new Set([...indexed, ...unindexed])].sort((a, b) => a - b).map((i) => rules[i] as R);
}

// Scratch space of every index (evaluation is synchronous, one record at a time).
const hits: Filed<unknown>[] = [];
let marks = new Uint8Array(64);

class IndexedRules<R extends IndexedRule> implements RuleIndex<R> {
  private readonly always: R[];
  /** The answer of a value filed under one rule alone, made at its first hit: one array per rule, whichever of its values the record has. */
  private readonly alone = new Map<number, R[]>();

  constructor(
    private readonly rules: readonly R[],
    private readonly unindexed: readonly number[],
    private readonly places: readonly Lookup<R>[],
  ) {
    this.always = unindexed.map((i) => rules[i] as R);
  }

  candidates(record: WatchedRecord): readonly R[] {
    const places = this.places;
    const found = hits as Filed<R>[];
    const p = prepareRecord(record);
    let count = 0;
    for (let i = 0; i < places.length; i++) {
      const { place, values, tails } = places[i] as Lookup<R>;
      let entry: Filed<R> | undefined;
      switch (place.kind) {
        case "slot": {
          // Most records name none of the rules' values: their text is turned away by its
          // tail before it is lowered and hashed, the costly part of a lookup.
          const raw = p.rawText(place.slot);
          if (raw !== undefined && !hasTail(tails, raw)) break;
          const value = p.value(place.slot);
          if (value !== undefined) entry = values.get(value);
          break;
        }
        case "topic": {
          const raw = p.rawTopic(place.index);
          if (raw === undefined || !hasTail(tails, raw)) break;
          const value = p.topic(place.index);
          if (value !== undefined) entry = values.get(value);
          break;
        }
        case "arg": {
          // The argument's raw text, not p.arg(): its readings are built only for a rule that is run.
          const text = p.argText(place.name);
          if (text === undefined) break;
          if (hasTail(tails, text)) {
            entry = values.get(text);
            if (entry !== undefined) found[count++] = entry;
            const lower = text.toLowerCase();
            entry = lower === text ? undefined : values.get(lower);
            if (entry !== undefined) found[count++] = entry;
          }
          entry = place.integers && DECIMAL_INTEGER.test(text) ? values.get(BigInt(text)) : undefined;
          break;
        }
      }
      if (entry !== undefined) found[count++] = entry;
    }
    if (count === 0) return this.always;
    const only = found[0] as Filed<R>;
    for (let k = 1; k < count; k++) if (found[k] !== only) return this.union(count);
    return typeof only === "number" ? this.aloneOf(only) : only.merged;
  }

  private aloneOf(i: number): R[] {
    let answer = this.alone.get(i);
    if (answer === undefined) this.alone.set(i, (answer = [this.rules[i] as R]));
    return answer;
  }

  /** Two or more entries hit (a record whose values several rules name): merge in rule order. */
  private union(count: number): R[] {
    const { rules } = this;
    if (marks.length < rules.length) marks = new Uint8Array(rules.length);
    for (const i of this.unindexed) marks[i] = 1;
    for (let k = 0; k < count; k++) {
      const filed = hits[k] as Filed<R>;
      const indexed = typeof filed === "number" ? filed : filed.rules;
      if (typeof indexed === "number") marks[indexed] = 1;
      else for (const i of indexed) marks[i] = 1;
    }
    const out: R[] = [];
    for (let i = 0; i < rules.length; i++) {
      if (marks[i] === 1) {
        out.push(rules[i] as R);
        marks[i] = 0;
      }
    }
    return out;
  }
}

/**
 * The values a record must have one of for the condition to hold, or undefined when the
 * condition requires none that can be looked up. Sound, not complete: undefined is
 * always safe (the rule is then evaluated on every record).
 */
export function requirementsOf(node: ConditionNode): Requirement[] | undefined {
  switch (node.type) {
    case "always":
    case "not":
      return undefined;
    case "all": {
      // Any one child's requirement holds for the whole conjunction: take the most selective.
      let best: Requirement[] | undefined;
      for (const child of node.children) {
        const requirements = requirementsOf(child);
        if (requirements !== undefined && (best === undefined || costOf(requirements) < costOf(best))) best = requirements;
      }
      return best;
    }
    case "any": {
      // Every branch must require something, and the record needs one of them.
      const all: Requirement[] = [];
      for (const child of node.children) {
        const requirements = requirementsOf(child);
        if (requirements === undefined) return undefined;
        all.push(...requirements);
      }
      return all;
    }
    case "test": {
      if (node.op !== "eq" && node.op !== "in") return undefined;
      const place = placeOf(node.field);
      if (place === undefined) return undefined;
      const placeKey = place.kind === "slot" ? `slot:${place.slot}` : place.kind === "topic" ? `topic:${place.index}` : `arg:${place.name}`;
      const values = node.op === "eq" ? [node.value as Scalar] : (node.value as Scalar[]);
      return values.map((value) => ({ place, placeKey, fieldId: node.field.id, fieldKind: node.field.kind, value }));
    }
  }
}

function placeOf(field: FieldSpec): Place | undefined {
  if (field.kind === "arg") return field.arg === undefined ? undefined : { kind: "arg", name: field.arg, integers: false };
  if (field.id === "topics") return { kind: "topic", index: field.index ?? 0 };
  // `direction` is relative to each rule's own watched account: not a plain value of the record.
  const slot = slotOf(field);
  return slot === undefined ? undefined : { kind: "slot", slot };
}

/**
 * How many records a required value lets through, roughly: an account, a transaction or a
 * token id names few records; an event, a selector, a call type or a flag names many
 * (every Transfer), and `contract` is the same on every record of a contract's watch.
 */
const SELECTIVE = new Set(["from", "to", "topics", "args", "transaction", "token_id", "token_count", "amount", "block"]);

function costOf(requirements: Requirement[]): number {
  let cost = 0;
  for (const r of requirements) cost += r.fieldKind === "boolean" ? 1000 : SELECTIVE.has(r.fieldId) && !(r.place.kind === "topic" && r.place.index === 0) ? 1 : 100;
  return cost;
}

/**
 * The keys a required value is filed under. A compiled test compares prepared values with
 * `===`, which Map keys reproduce. Event arguments compare as integers when both sides read
 * as one, as lowercase hex when both do, else as text: a value is filed under its text, its
 * lowercase hex and its integer, and a record looks up its text, its lowercase text and
 * its integer, so an equal pair always shares a key (a few unequal ones too, which the
 * rule's own test then rejects).
 */
function keysOf(requirement: Requirement): unknown[] {
  if (requirement.place.kind !== "arg") return [requirement.value];
  const value = requirement.value as ArgValue;
  const keys: unknown[] = [value.text];
  if (value.hex !== undefined) keys.push(value.hex);
  if (value.int !== undefined) keys.push(value.int);
  return keys;
}

const DECIMAL_INTEGER = /^-?\d+$/;

/** Buckets of tailOf. */
const TAILS = 4096;

/**
 * A bucket of a text's last three characters, ASCII letters folded to lower case, or -1
 * when one of them is not ASCII. Equal texts share it, and so do a text and its lower
 * case: lowering maps ASCII to ASCII one for one, and these three characters stay last
 * (only other-than-ASCII characters can change a string's length when lowered).
 */
function tailOf(text: string): number {
  const n = text.length;
  let tail = 0;
  for (let i = n - 3 < 0 ? 0 : n - 3; i < n; i++) {
    let c = text.charCodeAt(i);
    if (c > 0x7f) return -1;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    tail = tail * 131 + c;
  }
  return tail & (TAILS - 1);
}

/** False when no text key of the lookup can equal the text or its lower case. */
function hasTail(tails: Uint32Array, text: string): boolean {
  const tail = tailOf(text);
  return tail === -1 || (tails[tail >>> 5]! & (1 << (tail & 31))) !== 0;
}

