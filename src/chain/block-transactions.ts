import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import { JsonRpcCallError, type JsonRpc } from "./json-rpc.js";
import { decodeArguments, type MethodSpec } from "./method-abi.js";
import { TX_ERROR_REVERTED, checkBlockReceipts, inputsOf, type NodeTransaction } from "./node-transactions.js";

/** The one request a block costs: the block's transactions merged with their receipts, Kaia types and fee payers included. */
export const BLOCK_RECEIPTS_METHOD = "kaia_getBlockReceipts";
/** Asked only for a failed transaction of a watched account (txError 0x09): Kaia receipts carry no revert message. */
export const REVERT_TRACE_METHOD = "debug_traceTransaction";

export interface BlockTransactionsReaderOptions {
  rpc: JsonRpc;
  /** The functions the watches name (`methods:`), by selector: a call to one gets its name and arguments. */
  methods?: ReadonlyMap<string, MethodSpec>;
  /**
   * Whether a failed transaction is worth a revert-reason trace (one more request): the
   * transactions source asks for those of its watched accounts only. Default: none.
   */
  wantsRevertReason?: (tx: NodeTransaction) => boolean;
}

export interface BlockTransactionsReader {
  /** The top-level transactions of one block with their receipts, in index order. */
  read(block: number, signal: AbortSignal): Promise<NodeTransaction[]>;
}

/**
 * Reads blocks for the `transactions` source: one `kaia_getBlockReceipts` per block (see
 * docs/transactions.md for why this method), checked strictly (node-transactions.ts), the
 * input decoded for the methods the config names, and for a failed transaction of a
 * watched account the revert reason from the node's call tracer when the node serves
 * `debug_traceTransaction` (public endpoints usually do not: then the record has the
 * node's error text only, and kaiawatch stops asking).
 */
export function createBlockTransactionsReader(common: Common, options: BlockTransactionsReaderOptions): BlockTransactionsReader {
  const { rpc } = options;
  let tracesAvailable = true;

  async function revertReason(tx: NodeTransaction, signal: AbortSignal): Promise<string | undefined> {
    let result: unknown;
    try {
      result = await rpc.call(REVERT_TRACE_METHOD, [tx.hash, { tracer: "callTracer" }], signal);
    } catch (error) {
      if (!(error instanceof JsonRpcCallError)) throw error;
      // Method missing or the namespace closed: the node will not say; stop asking.
      if (error.isMethodUnavailable) {
        tracesAvailable = false;
        common.metrics.nodeRevertTraces.inc({ outcome: "unavailable" });
        common.logger.info({ method: REVERT_TRACE_METHOD, host: rpc.host }, "the node does not serve debug_traceTransaction: failed transactions are reported with the node's error code and text, without the revert message");
        return undefined;
      }
      common.metrics.nodeRevertTraces.inc({ outcome: "error" });
      common.logger.warn({ method: REVERT_TRACE_METHOD, transaction: tx.hash, err: describeError(error) }, "could not read a revert reason; the record goes without it");
      return undefined;
    }
    const trace = typeof result === "object" && result !== null ? (result as { revertReason?: unknown; reverted?: { message?: unknown } }) : {};
    const reason = typeof trace.revertReason === "string" ? trace.revertReason : typeof trace.reverted?.message === "string" ? trace.reverted.message : undefined;
    common.metrics.nodeRevertTraces.inc({ outcome: reason === undefined ? "no_reason" : "ok" });
    return reason;
  }

  return {
    async read(block, signal) {
      const result = await rpc.call(BLOCK_RECEIPTS_METHOD, [`0x${block.toString(16)}`], signal);
      const txs = checkBlockReceipts(block, result, (kind) => common.metrics.nodeTransactionAnomalies.inc({ kind }));
      common.metrics.nodeBlockReads.inc();
      const methods = options.methods;
      if (methods !== undefined && methods.size > 0) {
        const inputs = inputsOf(result);
        for (const tx of txs) {
          const spec = tx.method_id === undefined ? undefined : methods.get(tx.method_id);
          if (spec === undefined) continue;
          tx.method = spec.name;
          tx.method_signature = spec.signature;
          const args = decodeArguments(spec, inputs.get(tx.hash) ?? "0x");
          if (args !== undefined) tx.args = args;
        }
      }
      const wanted = options.wantsRevertReason;
      if (wanted !== undefined) {
        for (const tx of txs) {
          if (!tracesAvailable) break;
          if (tx.status !== "Fail" || tx.tx_error === undefined || Number(BigInt(tx.tx_error)) !== TX_ERROR_REVERTED || !wanted(tx)) continue;
          const reason = await revertReason(tx, signal);
          if (reason !== undefined) tx.revert_reason = reason.slice(0, 1024);
        }
      }
      return txs;
    },
  };
}
