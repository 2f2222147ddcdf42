import type { Common } from "../common/common.js";
import type { InternalTransactionListItem, InternalTransactionType } from "../explorer/types.js";
import { readBlockTime, type BlockTimeReader } from "./block-time.js";
import { JsonRpcCallError, JsonRpcError, type JsonRpc } from "./json-rpc.js";
import { formatKei } from "./units.js";

/** The one request a block costs: every transaction of the block replayed under the call tracer. */
export const BLOCK_TRACE_METHOD = "debug_traceBlockByNumber";

/** The size cap of a block's trace (the reader asks with it): a busy block's frames, inputs and outputs run to megabytes, past the client's 1 MiB. */
export const BLOCK_TRACE_MAX_BYTES = 64 * 1024 * 1024;

/** A node's trace of a block is not what kaiawatch can read (KW_RPC_TRACE): the block is not read, and the next tick asks again. */
export class NodeTraceError extends JsonRpcError {
  override name = "NodeTraceError";
  readonly block: number;
  constructor(block: number, host: string, message: string) {
    super(BLOCK_TRACE_METHOD, `${BLOCK_TRACE_METHOD} at ${host}, block ${block}: ${message}`, { code: "KW_RPC_TRACE" });
    this.block = block;
  }
}

/** The node does not serve `debug_traceBlockByNumber` (KW_RPC_TRACES_UNAVAILABLE): internal transactions stay with the explorer. */
export class NodeTracesUnavailableError extends JsonRpcError {
  override name = "NodeTracesUnavailableError";
  constructor(host: string, reason: string) {
    super(BLOCK_TRACE_METHOD, `${host} does not serve ${BLOCK_TRACE_METHOD} (${reason}): internal transactions can only be read from the explorer (chain.traces: false)`, { code: "KW_RPC_TRACES_UNAVAILABLE" });
  }
}

/** What a probe found: the node traces blocks with the call tracer, or why not. */
export type TracesAvailability = { available: true; block: number; transactions: number; calls: number } | { available: false; reason: string };

export interface BlockTracesReaderOptions {
  rpc: JsonRpc;
  /** The block's timestamp, for `datetime` (one eth_getBlockByNumber unless shared or cached). Default: read through `rpc`. */
  blockTime?: BlockTimeReader;
}

export interface BlockTracesReader {
  /**
   * The internal transactions of one block as operation 8 (blockInternalTransactions) lists
   * them, and in its order (transaction index descending, call id ascending). Throws
   * NodeTracesUnavailableError when the node does not serve traces (and asks no more), a
   * NodeTraceError for an answer it cannot read.
   */
  read(block: number, signal: AbortSignal): Promise<InternalTransactionListItem[]>;
  /** Traces `block` once (doctor): whether the node serves the call tracer. Other failures are thrown. */
  probe(block: number, signal: AbortSignal): Promise<TracesAvailability>;
  /** Undefined until the node has answered once; false once it said it does not serve traces. */
  readonly available: boolean | undefined;
}

const HASH = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const BYTES = /^0x(?:[0-9a-fA-F]{2})*$/;
/** An EVM frame type as the tracer writes it (the opcode's name): CALL, CREATE2, SELFDESTRUCT, … */
const FRAME_TYPE = /^[A-Z][A-Z0-9_]{0,31}$/;

/** One call frame of Kaia's callTracer (blockchain/vm/call_tracer.go CallFrame), the fields read. */
interface Frame {
  type: string;
  from: string;
  to?: string;
  value?: string;
  input?: string;
  error?: string;
  revertReason?: string;
  reverted?: { message?: unknown };
  calls?: unknown[];
}

/**
 * Reads a block's internal transactions from the node: `debug_traceBlockByNumber(block,
 * {tracer: "callTracer"})`, one request a block (plus the block's timestamp), checked
 * strictly and turned into the explorer's records with the explorer's identity.
 *
 * The numbering is the explorer indexer's (klaytn/finder-spark model/InternalTransaction.scala
 * `toRefined`): every transaction of the block gives records, its top-level frame call id 0,
 * the frames below numbered 1, 2, … in pre-order (a frame before its children, children in
 * order), `transaction_index` the transaction's position in the block. The fields are
 * finder-api's (InternalTransactionToListViewMapper): `amount` the frame's value in KAIA (none:
 * 0), `method_id` the first four bytes of the frame's input, `error` the frame's error. The
 * transaction's status is its top-level frame's: an error there is a failed transaction
 * (Kaia's receipt status is the top-level call's outcome); its `fail_message` is the revert
 * reason the tracer decoded, else the top-level error. Not in a trace, so not in the
 * records: `fee_payer` and `signature` (the explorer's name for the selector).
 */
export function createBlockTracesReader(common: Common, options: BlockTracesReaderOptions): BlockTracesReader {
  const { rpc } = options;
  const blockTime = options.blockTime ?? ((block, signal) => readBlockTime(rpc, block, signal));
  let available: boolean | undefined;
  /** What the node said when it refused, for every read after. */
  let refusal = "";

  async function trace(block: number, signal: AbortSignal): Promise<{ hash: string; frame: Frame }[] | { unavailable: string }> {
    if (!Number.isSafeInteger(block) || block < 0) throw new NodeTraceError(block, rpc.host, "not a block number");
    let result: unknown;
    try {
      result = await rpc.call(BLOCK_TRACE_METHOD, [`0x${block.toString(16)}`, { tracer: "callTracer" }], signal, { maxBytes: BLOCK_TRACE_MAX_BYTES });
    } catch (error) {
      if (error instanceof JsonRpcCallError && error.isMethodUnavailable) {
        common.metrics.nodeBlockTraces.inc({ outcome: "unavailable" });
        if (available !== false) common.logger.warn({ method: BLOCK_TRACE_METHOD, host: rpc.host, code: "KW_RPC_TRACES_UNAVAILABLE" }, "the node does not serve debug_traceBlockByNumber: internal transactions can only be read from the explorer (chain.traces: false)");
        available = false;
        refusal = error.rpcMessage || `JSON-RPC error ${error.rpcCode ?? "?"}`;
        return { unavailable: refusal };
      }
      common.metrics.nodeBlockTraces.inc({ outcome: "error" });
      throw error;
    }
    try {
      const traces = checkBlockTrace(result, (message) => new NodeTraceError(block, rpc.host, message));
      common.metrics.nodeBlockTraces.inc({ outcome: "ok" });
      available = true;
      return traces;
    } catch (error) {
      common.metrics.nodeBlockTraces.inc({ outcome: "error" });
      throw error;
    }
  }

  return {
    get available() {
      return available;
    },
    async read(block, signal) {
      if (available === false) throw new NodeTracesUnavailableError(rpc.host, refusal);
      const traces = await trace(block, signal);
      if ("unavailable" in traces) throw new NodeTracesUnavailableError(rpc.host, traces.unavailable);
      if (traces.length === 0) return [];
      const datetime = new Date((await blockTime(block, signal)) * 1000).toISOString();
      const out: InternalTransactionListItem[] = [];
      for (let index = traces.length - 1; index >= 0; index--) {
        const { hash, frame } = traces[index] as { hash: string; frame: Frame };
        out.push(...recordsOf(block, index, hash, datetime, frame));
      }
      return out;
    },
    async probe(block, signal) {
      const traces = await trace(block, signal);
      if ("unavailable" in traces) return { available: false, reason: traces.unavailable };
      let calls = 0;
      for (const { frame } of traces) calls += preorder(frame).length;
      return { available: true, block, transactions: traces.length, calls };
    },
  };
}

/**
 * The answer, checked: a list with one entry per transaction of the block, in block order,
 * each `{txHash, result}` with a call frame tree; an entry the node failed to trace (`error`,
 * e.g. a tracer timeout) fails the block, since its calls would be missing.
 */
function checkBlockTrace(result: unknown, fail: (message: string) => NodeTraceError): { hash: string; frame: Frame }[] {
  if (!Array.isArray(result)) throw fail(`the answer is ${describe(result)}, not a list of transaction traces`);
  return result.map((entry: unknown, index) => {
    const at = `[${index}]`;
    if (!isObject(entry)) throw fail(`${at} is ${describe(entry)}, not a transaction trace`);
    const hash = entry.txHash;
    if (typeof hash !== "string" || !HASH.test(hash)) throw fail(`${at}.txHash is ${describe(hash)}, not a transaction hash`);
    if (entry.result === undefined || entry.result === null) {
      const why = typeof entry.error === "string" ? `the node could not trace it: ${JSON.stringify(entry.error.slice(0, 200))}` : "no result";
      throw fail(`${at} (transaction ${hash.toLowerCase()}): ${why}`);
    }
    return { hash: hash.toLowerCase(), frame: checkFrames(entry.result, `${at}.result`, fail) };
  });
}

/** A frame and every frame below it, checked without recursion (a call tree may be 1,024 deep). */
function checkFrames(root: unknown, rootPath: string, fail: (message: string) => NodeTraceError): Frame {
  const pending: { value: unknown; path: string }[] = [{ value: root, path: rootPath }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path } = next;
    if (!isObject(value)) throw fail(`${path} is ${describe(value)}, not a call frame`);
    if (typeof value.type !== "string" || !FRAME_TYPE.test(value.type)) throw fail(`${path}.type is ${describe(value.type)}, not a call type`);
    if (typeof value.from !== "string" || !ADDRESS.test(value.from)) throw fail(`${path}.from is ${describe(value.from)}, not an address`);
    // A creation that failed has no address: Kaia omits `to`, some tracers write null.
    if (value.to !== undefined && value.to !== null && (typeof value.to !== "string" || !ADDRESS.test(value.to))) throw fail(`${path}.to is ${describe(value.to)}, not an address`);
    // STATICCALL carries no value: 0, as the explorer stores it.
    if (value.value !== undefined && value.value !== null && (typeof value.value !== "string" || !QUANTITY.test(value.value))) throw fail(`${path}.value is ${describe(value.value)}, not a hex quantity`);
    if (value.input !== undefined && value.input !== null && (typeof value.input !== "string" || !BYTES.test(value.input))) throw fail(`${path}.input is ${describe(value.input)}, not hex bytes`);
    if (value.error !== undefined && value.error !== null && typeof value.error !== "string") throw fail(`${path}.error is ${describe(value.error)}, not a text`);
    if (value.calls !== undefined && value.calls !== null) {
      if (!Array.isArray(value.calls)) throw fail(`${path}.calls is ${describe(value.calls)}, not a list of call frames`);
      value.calls.forEach((child: unknown, i) => pending.push({ value: child, path: `${path}.calls[${i}]` }));
    }
  }
  return root as Frame;
}

/** The frames of a transaction in the explorer's call id order: pre-order, from the top-level frame (0). */
function preorder(root: Frame): Frame[] {
  const out: Frame[] = [];
  const pending: Frame[] = [root];
  for (let frame = pending.pop(); frame !== undefined; frame = pending.pop()) {
    out.push(frame);
    const calls = (frame.calls ?? []) as Frame[];
    for (let i = calls.length - 1; i >= 0; i--) pending.push(calls[i] as Frame);
  }
  return out;
}

function recordsOf(block: number, index: number, hash: string, datetime: string, root: Frame): InternalTransactionListItem[] {
  const failure = textOf(root.error);
  const reason = typeof root.reverted?.message === "string" && root.reverted.message !== "" ? root.reverted.message : textOf(root.revertReason);
  const status: InternalTransactionListItem["transaction_status"] = failure === undefined ? { status: "Success" } : { status: "Fail", fail_message: (reason ?? failure).slice(0, 1024) };
  return preorder(root).map((frame, callId) => {
    const record: InternalTransactionListItem = {
      call_id: callId,
      block_id: block,
      transaction_hash: hash,
      transaction_index: index,
      datetime,
      type: frame.type as InternalTransactionType,
      from: frame.from.toLowerCase(),
      amount: formatKei(typeof frame.value === "string" ? BigInt(frame.value) : 0n),
      transaction_status: { ...status },
    };
    if (typeof frame.to === "string") record.to = frame.to.toLowerCase();
    const error = textOf(frame.error);
    if (error !== undefined) record.error = error.slice(0, 1024);
    if (typeof frame.input === "string" && frame.input.length >= 10) record.method_id = frame.input.slice(0, 10).toLowerCase();
    return record;
  });
}

/** A text that says something; an empty error is no error (the explorer's indexer writes "" for none). */
function textOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return "missing";
  if (Array.isArray(value)) return "a list";
  return JSON.stringify(value)?.slice(0, 80) ?? String(value);
}
