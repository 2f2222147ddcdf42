import { ZERO_ADDRESS, isBurnAddress } from "../chain/address.js";
import type { WatchedRecord } from "../watch/record.js";
import type { ArgValue } from "./operand.js";
import { argValue } from "./operand.js";
import { amountKeiOf, integerOf } from "./record-values.js";

/** A prepared value: lowercase text, bigint, boolean, or undefined when absent. */
export type PreparedValue = string | bigint | boolean | undefined;

/**
 * Where each field's prepared value sits in PreparedRecord.values. An array slot rather
 * than a named property because the compiled comparison closures are shared code: an
 * element load at a captured index stays fast for every field, where a named-property
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
 * A record with every value a condition compares already in comparable form (lowercase
 * addresses and hashes, bigint amounts and integers, derived flags). Built once per record
 * and shared by every rule of its source, so fifty rules cost one parse of the amount.
 */
export class PreparedRecord {
  readonly record: WatchedRecord;
  /** Indexed by SLOT; every slot exists (undefined when it does not apply). */
  readonly values: PreparedValue[];
  readonly topics: readonly string[];
  private args: Map<string, ArgValue> | undefined;

  constructor(record: WatchedRecord) {
    this.record = record;
    this.args = undefined;
    // A literal of the full length keeps the array packed (no holes) for fast element loads.
    const v: PreparedValue[] = [undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined,
      undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined];
    this.values = v;
    v[SLOT.block] = BigInt(record.block);
    v[SLOT.transaction] = lower(record.transactionHash);
    let topics: readonly string[] = [];
    switch (record.family) {
      case "event_logs": {
        const d = record.data;
        topics = d.topics.map((t) => t.toLowerCase());
        v[SLOT.contract] = lower(d.contract_address);
        v[SLOT.event] = d.type;
        v[SLOT.event_signature] = topics[0];
        v[SLOT.log_index] = integerOf(d.log_index);
        v[SLOT.estimated] = d.estimated_event_log === true;
        break;
      }
      case "nft_transfers": {
        const d = record.data;
        const from = lower(d.from);
        const to = lower(d.to);
        v[SLOT.contract] = lower(d.contract.contract_address);
        v[SLOT.contract_type] = lower(d.contract.contract_type);
        v[SLOT.token_id] = integerOf(d.token_id);
        v[SLOT.from] = from;
        v[SLOT.to] = to;
        v[SLOT.token_count] = integerOf(d.token_count);
        v[SLOT.mint] = from === ZERO_ADDRESS;
        v[SLOT.burn] = to === undefined || isBurnAddress(to);
        break;
      }
      case "internal_transactions": {
        const d = record.data;
        const status = lower(d.transaction_status?.status);
        v[SLOT.type] = lower(d.type);
        v[SLOT.from] = lower(d.from);
        v[SLOT.to] = lower(d.to);
        v[SLOT.amount] = amountKeiOf(d.amount);
        v[SLOT.status] = status;
        v[SLOT.error] = d.error;
        v[SLOT.fail_message] = d.transaction_status?.fail_message;
        v[SLOT.failed] = (d.error !== undefined && d.error !== "") || status === "fail";
        v[SLOT.method_id] = lower(d.method_id);
        v[SLOT.function_signature] = d.signature;
        v[SLOT.call_id] = integerOf(d.call_id);
        break;
      }
    }
    this.topics = topics;
  }

  /** A decoded event argument by name (the first one, should a name repeat). */
  arg(name: string): ArgValue | undefined {
    if (this.args === undefined) {
      this.args = new Map();
      if (this.record.family === "event_logs") {
        for (const item of this.record.data.items) {
          if (!this.args.has(item.name)) this.args.set(item.name, argValue(item.value));
        }
      }
    }
    return this.args.get(name);
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
