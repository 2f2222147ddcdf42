import { ZERO_ADDRESS, isBurnAddress } from "../chain/address.js";
import type { WatchedRecord } from "../watch/record.js";
import type { ArgValue } from "./operand.js";
import { argValue } from "./operand.js";
import { amountKeiOf, integerOf } from "./record-values.js";

/** A prepared value: lowercase text, bigint, boolean, or undefined when absent. */
export type PreparedValue = string | bigint | boolean | undefined;

/**
 * Where each field's prepared value sits in PreparedRecord. A slot number rather than a
 * named property because the compiled comparison closures are shared code: one method
 * call with a captured index stays monomorphic for every field, where a named-property
 * getter per field would be one more (megamorphic) call per comparison.
 */
export const SLOT = {
  contract: 0,
  event: 1,
  block: 2,
  transaction: 3,
  log_index: 4,
  estimated: 5,
  contract_type: 6,
  token_id: 7,
  from: 8,
  to: 9,
  token_count: 10,
  mint: 11,
  burn: 12,
  type: 13,
  amount: 14,
  status: 15,
  failed: 16,
  error: 17,
  fail_message: 18,
  method_id: 19,
  /** internal_transactions: the function name. */
  function_signature: 20,
  call_id: 21,
  /** event_logs: topic0. */
  event_signature: 22,
} as const;

const lower = (s: string | undefined): string | undefined => (typeof s === "string" ? s.toLowerCase() : undefined);

/**
 * A record whose values a condition compares are read in comparable form (lowercase
 * addresses and hashes, bigint amounts and integers, derived flags), each the first time
 * a rule asks for it and then kept: fifty rules cost one parse of the amount, and a value
 * no rule reads costs nothing. Most records meet only the few rules that the rule index
 * (rule-index.ts) cannot rule out, so reading everything up front was most of the cost.
 */
export class PreparedRecord {
  readonly record: WatchedRecord;
  /** Indexed by SLOT; valid where the bit of `known` is set. */
  private readonly values: PreparedValue[];
  private known: number;
  private topics: (string | undefined)[] | undefined;
  /** Parallel to an event log's items, filled as arguments are read. */
  private args: (ArgValue | undefined)[] | undefined;

  constructor(record: WatchedRecord) {
    this.record = record;
    this.known = 0;
    this.topics = undefined;
    this.args = undefined;
    // A literal of the full length keeps the array packed (no holes) for fast element loads.
    this.values = [undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined,
      undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined];
  }

  /** The prepared value at a SLOT (undefined when the field does not apply or is absent). */
  value(slot: number): PreparedValue {
    const bit = 1 << slot;
    if ((this.known & bit) === 0) {
      this.values[slot] = this.read(slot);
      this.known |= bit;
    }
    return this.values[slot];
  }

  /** Topic i, lowercase. */
  topic(i: number): string | undefined {
    if (this.record.family !== "event_logs") return undefined;
    const topics = (this.topics ??= []);
    if (i >= topics.length || topics[i] === undefined) topics[i] = lower(this.record.data.topics[i]);
    return topics[i];
  }

  /** A decoded event argument by name (the first one, should a name repeat). */
  arg(name: string): ArgValue | undefined {
    if (this.record.family !== "event_logs") return undefined;
    const items = this.record.data.items;
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as (typeof items)[number];
      if (item.name !== name) continue;
      const args = (this.args ??= []);
      return (args[i] ??= argValue(item.value));
    }
    return undefined;
  }

  private read(slot: number): PreparedValue {
    const record = this.record;
    if (slot === SLOT.block) return BigInt(record.block);
    if (slot === SLOT.transaction) return lower(record.transactionHash);
    switch (record.family) {
      case "event_logs": {
        const d = record.data;
        switch (slot) {
          case SLOT.contract: return lower(d.contract_address);
          case SLOT.event: return d.type;
          case SLOT.event_signature: return this.topic(0);
          case SLOT.log_index: return integerOf(d.log_index);
          case SLOT.estimated: return d.estimated_event_log === true;
        }
        return undefined;
      }
      case "nft_transfers": {
        const d = record.data;
        switch (slot) {
          case SLOT.contract: return lower(d.contract.contract_address);
          case SLOT.contract_type: return lower(d.contract.contract_type);
          case SLOT.token_id: return integerOf(d.token_id);
          case SLOT.from: return lower(d.from);
          case SLOT.to: return lower(d.to);
          case SLOT.token_count: return integerOf(d.token_count);
          case SLOT.mint: return this.value(SLOT.from) === ZERO_ADDRESS;
          case SLOT.burn: {
            const to = this.value(SLOT.to) as string | undefined;
            return to === undefined || isBurnAddress(to);
          }
        }
        return undefined;
      }
      case "internal_transactions": {
        const d = record.data;
        switch (slot) {
          case SLOT.type: return lower(d.type);
          case SLOT.from: return lower(d.from);
          case SLOT.to: return lower(d.to);
          case SLOT.amount: return amountKeiOf(d.amount);
          case SLOT.status: return lower(d.transaction_status?.status);
          case SLOT.error: return d.error;
          case SLOT.fail_message: return d.transaction_status?.fail_message;
          case SLOT.failed: return (d.error !== undefined && d.error !== "") || this.value(SLOT.status) === "fail";
          case SLOT.method_id: return lower(d.method_id);
          case SLOT.function_signature: return d.signature;
          case SLOT.call_id: return integerOf(d.call_id);
        }
        return undefined;
      }
    }
  }
}

let lastRecord: WatchedRecord | undefined;
let lastPrepared: PreparedRecord | undefined;

/**
 * The prepared form of a record, built once per record when rules are evaluated record
 * by record (the engine's order): the last record is remembered, so the fifty rules of a
 * source share one preparation. Another order rebuilds it for each call; callers that
 * need another order call prepareRecord themselves and use `testPrepared`. A WeakMap
 * cache was measured instead and rejected: with 100,000 live records its upkeep in the
 * garbage collector cost more than the evaluations. Records are treated as immutable.
 */
export function prepareRecord(record: WatchedRecord): PreparedRecord {
  if (record !== lastRecord) {
    lastPrepared = new PreparedRecord(record);
    lastRecord = record;
  }
  return lastPrepared as PreparedRecord;
}
