import { createHash } from "node:crypto";
import { parseKaia } from "./amounts.js";
import { blockNumberParam, simulatedBlockHash } from "./block-rpc.js";
import type { Chain, TxInfo } from "./chain.js";
import type { RpcAnswer } from "./state-rpc.js";

/*
 * kaia_getBlockReceipts and debug_traceTransaction (callTracer) over the simulated chain, in
 * the shape a Kaia node gives them (api/api_kaia_transaction.go RpcOutputReceipt: the
 * transaction's fields merged with its receipt's; a failed one has status 0x0 and txError).
 * Written here, not imported from src/chain: the simulator is the reference the client is
 * tested against.
 */

const TYPE_NAMES: Record<number, string> = {
  0: "TxTypeLegacyTransaction",
  8: "TxTypeValueTransfer",
  9: "TxTypeFeeDelegatedValueTransfer",
  10: "TxTypeFeeDelegatedValueTransferWithRatio",
  48: "TxTypeSmartContractExecution",
  49: "TxTypeFeeDelegatedSmartContractExecution",
  50: "TxTypeFeeDelegatedSmartContractExecutionWithRatio",
  0x7802: "TxTypeEthereumDynamicFee",
};

const hex = (n: number | bigint) => `0x${n.toString(16)}`;
const hash32 = (text: string) => `0x${createHash("sha256").update(text).digest("hex")}`;


/** What a transaction sent: its own value when a test chose one, else the top call's amount, else nothing. */
function valueKei(tx: TxInfo): bigint {
  if (tx.value !== undefined) return parseKaia(tx.value) ?? 0n;
  const top = tx.calls.find((c) => c.level === 0 && c.callId === 0);
  return top === undefined ? 0n : (parseKaia(top.amount) ?? 0n);
}

/** The type a transaction gets: a test's choice, else fee-delegated when a fee payer paid, else legacy or EIP-1559 by whether it calls a contract. */
function typeOf(tx: TxInfo): number {
  if (tx.typeInt !== undefined) return tx.typeInt;
  if (tx.feePayer !== undefined) return tx.logs.length > 0 || tx.input !== undefined ? 49 : 9;
  return tx.logs.length > 0 ? 0x7802 : 0;
}

function receiptOf(tx: TxInfo): Record<string, unknown> {
  const typeInt = typeOf(tx);
  const gasPrice = BigInt(tx.gasPrice ?? "25000000000");
  const gasUsed = tx.gasUsed ?? (tx.input === undefined && tx.logs.length === 0 ? 21_000 : 60_000 + 20_000 * tx.logs.length);
  const out: Record<string, unknown> = {
    blockHash: simulatedBlockHash(tx.block),
    blockNumber: hex(tx.block),
    contractAddress: null,
    effectiveGasPrice: hex(gasPrice),
    from: tx.from.toLowerCase(),
    gas: hex(gasUsed + 50_000),
    gasPrice: hex(gasPrice),
    gasUsed: hex(gasUsed),
    logs: tx.logs.map((log) => ({ address: log.contract, topics: [log.topic0], logIndex: hex(log.logIndex), transactionHash: tx.hash })),
    logsBloom: `0x${"0".repeat(512)}`,
    nonce: hex(tx.index),
    senderTxHash: tx.hash,
    signatures: [{ V: "0x7f6", R: hash32(`r${tx.hash}`), S: hash32(`s${tx.hash}`) }],
    status: tx.status === "Success" ? "0x1" : "0x0",
    to: tx.to === "" ? null : tx.to.toLowerCase(),
    transactionHash: tx.hash,
    transactionIndex: hex(tx.index),
    type: TYPE_NAMES[typeInt] ?? "UndefinedTxType",
    typeInt,
    value: hex(valueKei(tx)),
  };
  // The value transfer types carry no input; the others do.
  if (typeInt !== 8 && typeInt !== 9 && typeInt !== 10) out.input = tx.input ?? "0x";
  if (tx.status === "Fail") out.txError = hex(tx.txError ?? 0x09);
  if (tx.feePayer !== undefined && (typeInt & 0xff00) !== 0x7800 && (typeInt & 3) !== 0) {
    out.feePayer = tx.feePayer.toLowerCase();
    out.feePayerSignatures = [{ V: "0x7f5", R: hash32(`fr${tx.hash}`), S: hash32(`fs${tx.hash}`) }];
    if ((typeInt & 3) === 2) out.feeRatio = hex(tx.feeRatio ?? 30);
  }
  return out;
}

/** Options of the node methods (setFaults): a node without the debug namespace, as public endpoints are. */
export interface ReceiptsRpcOptions {
  debugUnavailable?: boolean;
}

export function answerReceiptsRpc(chain: Chain, method: string, params: unknown, options: ReceiptsRpcOptions): RpcAnswer | undefined {
  if (method === "kaia_getBlockReceipts" || method === "klay_getBlockReceipts") {
    const block = blockNumberParam(chain, params);
    if (typeof block !== "number") return block;
    const info = chain.block(block);
    if (info === undefined) return { error: { code: -32000, message: `the block does not exist (block number: ${block})` } };
    return { result: info.txs.map(receiptOf) };
  }
  if (method === "debug_traceTransaction") {
    if (options.debugUnavailable) return { error: { code: -32601, message: "the method debug_traceTransaction does not exist/is not available" } };
    const hash = Array.isArray(params) ? params[0] : undefined;
    const tx = typeof hash === "string" ? chain.tx(hash) : undefined;
    if (tx === undefined) return { error: { code: -32000, message: "transaction not found" } };
    const frame: Record<string, unknown> = { type: "CALL", from: tx.from, to: tx.to, value: hex(valueKei(tx)), gas: "0x0", gasUsed: "0x0", input: tx.input ?? "0x" };
    if (tx.status === "Fail") {
      frame.error = "execution reverted";
      if (tx.revertReason !== undefined) {
        frame.revertReason = tx.revertReason;
        frame.reverted = { contract: tx.to, message: tx.revertReason };
      }
    }
    return { result: frame };
  }
  return undefined;
}
