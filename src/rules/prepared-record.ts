import { ZERO_ADDRESS, isBurnAddress } from "../chain/address.js";
import type { WatchedRecord } from "../watch/record.js";
import type { ArgValue } from "./operand.js";
import { argValue } from "./operand.js";
import { amountKeiOf, integerOf } from "./record-values.js";

const lower = (s: string | undefined): string | undefined => (typeof s === "string" ? s.toLowerCase() : undefined);

/**
 * A record with every value a condition compares already in comparable form (lowercase
 * addresses and hashes, bigint amounts and integers, derived flags). Built once per record
 * and shared by every rule of its source, so fifty rules cost one parse of the amount.
 * Every field exists on every instance (undefined when it does not apply) so that V8 sees
 * one object shape on the hot path.
 */
export class PreparedRecord {
  readonly record: WatchedRecord;
  block: bigint;
  transaction: string | undefined;
  contract: string | undefined = undefined;
  event: string | undefined = undefined;
  topics: readonly string[] = [];
  logIndex: bigint | undefined = undefined;
  estimated = false;
  contractType: string | undefined = undefined;
  tokenId: bigint | undefined = undefined;
  from: string | undefined = undefined;
  to: string | undefined = undefined;
  tokenCount: bigint | undefined = undefined;
  mint = false;
  burn = false;
  type: string | undefined = undefined;
  amount: bigint | undefined = undefined;
  status: string | undefined = undefined;
  failed = false;
  error: string | undefined = undefined;
  failMessage: string | undefined = undefined;
  methodId: string | undefined = undefined;
  signature: string | undefined = undefined;
  callId: bigint | undefined = undefined;
  private args: Map<string, ArgValue> | undefined = undefined;

  constructor(record: WatchedRecord) {
    this.record = record;
    this.block = BigInt(record.block);
    this.transaction = lower(record.transactionHash);
    switch (record.family) {
      case "event_logs": {
        const d = record.data;
        this.contract = lower(d.contract_address);
        this.event = d.type;
        this.topics = d.topics.map((t) => t.toLowerCase());
        this.logIndex = integerOf(d.log_index);
        this.estimated = d.estimated_event_log === true;
        break;
      }
      case "nft_transfers": {
        const d = record.data;
        this.contract = lower(d.contract.contract_address);
        this.contractType = lower(d.contract.contract_type);
        this.tokenId = integerOf(d.token_id);
        this.from = lower(d.from);
        this.to = lower(d.to);
        this.tokenCount = integerOf(d.token_count);
        this.mint = this.from === ZERO_ADDRESS;
        this.burn = this.to === undefined || isBurnAddress(this.to);
        break;
      }
      case "internal_transactions": {
        const d = record.data;
        this.type = lower(d.type);
        this.from = lower(d.from);
        this.to = lower(d.to);
        this.amount = amountKeiOf(d.amount);
        this.status = lower(d.transaction_status?.status);
        this.error = d.error;
        this.failMessage = d.transaction_status?.fail_message;
        this.failed = (d.error !== undefined && d.error !== "") || this.status === "fail";
        this.methodId = lower(d.method_id);
        this.signature = d.signature;
        this.callId = integerOf(d.call_id);
        break;
      }
    }
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
const cache = new WeakMap<WatchedRecord, PreparedRecord>();

/**
 * The prepared form of a record, built once: the last record is checked first because
 * rules are evaluated record by record; the WeakMap serves other orders and lets records
 * be collected. Records are treated as immutable once received.
 */
export function prepareRecord(record: WatchedRecord): PreparedRecord {
  if (record === lastRecord) return lastPrepared as PreparedRecord;
  let prepared = cache.get(record);
  if (prepared === undefined) {
    prepared = new PreparedRecord(record);
    cache.set(record, prepared);
  }
  lastRecord = record;
  lastPrepared = prepared;
  return prepared;
}
