import { parseKaia } from "./amounts.js";
import { blockNumberParam } from "./block-rpc.js";
import type { CallRec, Chain, TxInfo } from "./chain.js";
import { callInput } from "./serialize.js";
import type { RpcAnswer } from "./state-rpc.js";

/*
 * debug_traceBlockByNumber with {tracer: "callTracer"} over the simulated chain, as a Kaia
 * node answers it (node/cn/tracers/api.go traceBlock: one {txHash, result} per transaction
 * of the block, in block order; blockchain/vm/call_tracer.go CallFrame: type, from, to,
 * value, gas, gasUsed, input, output, error, revertReason, reverted, calls). Built from the
 * same call records operation 8 serves, so the node and the explorer tell one story. Written
 * here, not imported from src/chain: the simulator is the reference the client is tested
 * against.
 */

const hex = (n: number | bigint) => `0x${n.toString(16)}`;

type Frame = Record<string, unknown> & { calls?: Frame[] };

/** The node's frame of one call record: a test's chosen record (custom) as chosen, a generated one with its calldata, output and revert. */
function frameOf(rec: CallRec, tx: TxInfo): Frame {
  const custom = rec.custom;
  const amount = parseKaia(custom?.amount ?? rec.amount) ?? 0n;
  const frame: Frame = { type: custom?.type ?? rec.type, from: (custom?.from ?? rec.from).toLowerCase() };
  const to = custom ? custom.to : rec.to;
  if (to !== undefined && to !== "") frame.to = to.toLowerCase();
  // The EVM passes no value to a static call, and the tracer writes none.
  if (frame.type !== "STATICCALL") frame.value = hex(amount);
  frame.gas = hex(rec.gasLimit);
  frame.gasUsed = hex(Math.floor(rec.gasLimit / 3));
  frame.input = custom ? (custom.method_id ?? "0x") : (callInput(rec) ?? "0x");
  const error = custom ? custom.error : rec.error;
  if (error === undefined) {
    if (rec.output !== undefined) frame.output = rec.output;
    return frame;
  }
  frame.error = error;
  // A revert bubbles up with its message: every frame on the way out decodes the same reason.
  const message = rec.revertMessage ?? (tx.status === "Fail" ? (custom?.transaction_status?.fail_message ?? tx.failMessage ?? tx.revertReason) : undefined);
  if (/revert/i.test(error)) {
    frame.reverted = message === undefined ? { contract: frame.to } : { contract: frame.to, message };
    if (message !== undefined) frame.revertReason = message;
  }
  return frame;
}

/**
 * A transaction's frame tree. Its call records are in call id order (pre-order), each below
 * its parent. A generated transaction always has its call 0 (generate.ts); one a test chose
 * without internal transactions still has its top-level frame, as every transaction does on a node.
 */
export function traceOf(tx: TxInfo): Frame {
  if (tx.calls.length === 0) {
    const value = tx.value === undefined ? 0n : (parseKaia(tx.value) ?? 0n);
    const frame: Frame = { type: "CALL", from: tx.from.toLowerCase(), gas: "0x30d40", gasUsed: "0x5208", input: tx.input ?? "0x", value: hex(value) };
    if (tx.to !== "") frame.to = tx.to.toLowerCase();
    if (tx.status === "Fail") {
      frame.error = "execution reverted";
      frame.reverted = tx.revertReason === undefined ? { contract: frame.to } : { contract: frame.to, message: tx.revertReason };
      if (tx.revertReason !== undefined) frame.revertReason = tx.revertReason;
    }
    return frame;
  }
  const frames = new Map<number, Frame>();
  let root: Frame | undefined;
  for (const rec of tx.calls) {
    const frame = frameOf(rec, tx);
    frames.set(rec.callId, frame);
    // A test's chosen records have no parent: the first is the top-level frame, the others its calls.
    const parent = rec.parentCallId === undefined ? root : frames.get(rec.parentCallId);
    if (parent === undefined) root = frame;
    else (parent.calls ??= []).push(frame);
  }
  return root as Frame;
}

/** Options of the node methods (setFaults): a node without the debug namespace, as public endpoints are. */
export interface BlockTraceRpcOptions {
  debugUnavailable?: boolean;
}

export function answerBlockTraceRpc(chain: Chain, method: string, params: unknown, options: BlockTraceRpcOptions): RpcAnswer | undefined {
  if (method !== "debug_traceBlockByNumber") return undefined;
  if (options.debugUnavailable) return { error: { code: -32601, message: `the method ${method} does not exist/is not available` } };
  const config = Array.isArray(params) ? (params[1] as { tracer?: unknown } | undefined) : undefined;
  if (config?.tracer !== "callTracer" && config?.tracer !== "fastCallTracer") return { error: { code: -32602, message: "the simulator traces with the callTracer only" } };
  const block = blockNumberParam(chain, params);
  if (typeof block !== "number") return block;
  if (block === 0) return { error: { code: -32000, message: "genesis is not traceable" } };
  const info = chain.block(block);
  if (info === undefined) return { error: { code: -32000, message: `block #${block} not found` } };
  return { result: info.txs.map((tx) => ({ txHash: tx.hash, result: traceOf(tx) })) };
}
