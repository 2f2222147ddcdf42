import { DEAD_ADDRESSES, ZERO_ADDRESS } from "../chain/address.js";
import { decodeTokenTransfer } from "../chain/token-transfer.js";
import type { WatchedRecord } from "../model/record.js";
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
  revert_reason: 23,
  /** transactions: the decoded function name. */
  method: 24,
  type_int: 25,
  fee_payer: 26,
  fee_delegated: 27,
  fee: 28,
  gas_used: 29,
  index: 30,
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
  private current: WatchedRecord;
  /** Indexed by SLOT; valid where the bit of `known` is set. */
  private readonly values: PreparedValue[];
  private known: number;
  /** Lowercase topics 0–3 of an event log, valid where the bit of `knownTopics` is set. */
  private readonly topics: (string | undefined)[];
  private knownTopics: number;
  /** Parallel to an event log's items (the first 31), valid where the bit of `knownArgs` is set. */
  private readonly args: (ArgValue | undefined)[];
  private knownArgs: number;

  constructor(record: WatchedRecord) {
    this.current = record;
    this.known = 0;
    this.knownTopics = 0;
    this.knownArgs = 0;
    this.topics = [undefined, undefined, undefined, undefined];
    this.args = [];
    // A literal of the full length keeps the array packed (no holes) for fast element loads.
    this.values = [undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined,
      undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined,
      undefined, undefined, undefined, undefined, undefined];
  }

  get record(): WatchedRecord {
    return this.current;
  }

  /** Forgets every value read and moves on to another record, reusing the storage. */
  load(record: WatchedRecord): void {
    this.current = record;
    this.known = 0;
    this.knownTopics = 0;
    this.knownArgs = 0;
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
    const record = this.current;
    if (record.family !== "event_logs") return undefined;
    // Conditions name topics 0 to 3 only (a log has no more).
    if (i > 3) return lower(record.data.topics[i]);
    const bit = 1 << i;
    if ((this.knownTopics & bit) === 0) {
      this.topics[i] = lower(record.data.topics[i]);
      this.knownTopics |= bit;
    }
    return this.topics[i];
  }

  /** A decoded event (or transaction) argument by name (the first one, should a name repeat). */
  arg(name: string): ArgValue | undefined {
    const record = this.current;
    if (record.family === "transactions") {
      const found = record.data.args?.find((a) => a.name === name);
      return found === undefined ? undefined : argValue(found.value);
    }
    if (record.family !== "event_logs") return undefined;
    const items = record.data.items;
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
    const record = this.current;
    if (slot === SLOT.transaction) return record.transactionHash;
    switch (record.family) {
      case "event_logs": {
        const d = record.data;
        switch (slot) {
          case SLOT.contract: return d.contract_address;
          case SLOT.event: return d.type;
          case SLOT.event_signature: return d.topics[0];
        }
        return undefined;
      }
      case "nft_transfers": {
        const d = record.data;
        switch (slot) {
          case SLOT.contract: return d.contract.contract_address;
          case SLOT.contract_type: return d.contract.contract_type;
          case SLOT.from: return d.from;
          case SLOT.to: return d.to;
        }
        return undefined;
      }
      case "internal_transactions": {
        const d = record.data;
        switch (slot) {
          case SLOT.type: return d.type;
          case SLOT.from: return d.from;
          case SLOT.to: return d.to;
          case SLOT.status: return d.transaction_status?.status;
          case SLOT.error: return d.error;
          case SLOT.fail_message: return d.transaction_status?.fail_message;
          case SLOT.method_id: return d.method_id;
          case SLOT.function_signature: return d.signature;
        }
        return undefined;
      }
      case "transactions": {
        const d = record.data;
        switch (slot) {
          case SLOT.from: return d.from;
          case SLOT.to: return d.to;
          case SLOT.status: return d.status;
          case SLOT.error: return d.error;
          case SLOT.revert_reason: return d.revert_reason;
          case SLOT.method_id: return d.method_id;
          case SLOT.method: return d.method;
          case SLOT.type: return d.type;
          case SLOT.fee_payer: return d.fee_payer;
        }
        return undefined;
      }
    }
  }

  private read(slot: number): PreparedValue {
    const record = this.current;
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
          // The token fields of a token watch's Transfer logs; undefined for any other log.
          case SLOT.from: return decodeTokenTransfer(d)?.from;
          case SLOT.to: return decodeTokenTransfer(d)?.to;
          case SLOT.amount: return decodeTokenTransfer(d)?.value;
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
            // isBurnAddress(to) on a value already in lower case (it would lower it again).
            return to === undefined || to === ZERO_ADDRESS || DEAD_ADDRESSES.includes(to);
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
      case "transactions": {
        const d = record.data;
        switch (slot) {
          case SLOT.from: return d.from;
          case SLOT.to: return d.to;
          case SLOT.amount: return BigInt(d.value_kei);
          case SLOT.status: return d.status.toLowerCase();
          case SLOT.failed: return d.status === "Fail";
          case SLOT.error: return d.error;
          case SLOT.revert_reason: return d.revert_reason;
          case SLOT.method_id: return d.method_id;
          case SLOT.method: return d.method;
          case SLOT.type: return lower(d.type);
          case SLOT.type_int: return BigInt(d.type_int);
          case SLOT.fee_payer: return d.fee_payer;
          case SLOT.fee_delegated: return d.fee_payer !== undefined;
          case SLOT.fee: return amountKeiOf(d.fee);
          case SLOT.gas_used: return integerOf(d.gas_used);
          case SLOT.index: return BigInt(d.transaction_index);
        }
        return undefined;
      }
    }
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
