import type { Balances } from "./balances.js";
import type { BlockIndex, CallRec, Chain, TxInfo } from "./chain.js";
import type { createPollLog } from "./poll-log.js";
import { eventLogJson, internalTxJson, nftTransferJson } from "./serialize.js";
import type { BlockRange, SimulatorTruth } from "./simulator.js";

/** The chain as it is, read straight from its indexes: what tests compare a scan against. */
export function createTruth(chain: Chain, balances: Balances, pollLog: ReturnType<typeof createPollLog>): SimulatorTruth {
  const slice = <R extends { block: number }>(index: BlockIndex<R> | undefined, range: BlockRange): R[] => {
    if (!index) return [];
    const [lo, hi] = index.range(range.from, range.to);
    return index.items.slice(lo, hi);
  };
  const ascendingCalls = (calls: CallRec[]) => [...calls].sort((a, b) => a.block - b.block || a.tx.index - b.tx.index || a.callId - b.callId);
  const lc = (s: string) => s.toLowerCase();

  return {
    accountEventLogs: (address, r) => slice(r.signature ? chain.logsByContractTopic.get(`${lc(address)}|${lc(r.signature)}`) : chain.logsByContract.get(lc(address)), r).map(eventLogJson),
    accountNftTransfers: (address, r) => slice(r.contractAddress ? chain.nftsByAccountContract.get(`${lc(address)}|${lc(r.contractAddress)}`) : chain.nftsByAccount.get(lc(address)), r).map(nftTransferJson),
    nftTransfers: (token, r) => slice(r.tokenId !== undefined ? chain.nftsByContractToken.get(`${lc(token)}|${r.tokenId}`) : chain.nftsByContract.get(lc(token)), r).map(nftTransferJson),
    accountInternalTransactions: (address, r) => ascendingCalls(slice(chain.callsByAccount.get(lc(address)), r)).map(internalTxJson),
    blockInternalTransactions: (block) => ascendingCalls(chain.block(block)?.calls ?? []).map(internalTxJson),
    blockDatetime: (block) => chain.block(block)?.datetime,
    blockTransactions: (block) => (chain.block(block)?.txs ?? []).map((tx: TxInfo) => ({ hash: tx.hash, index: tx.index, from: tx.from, to: tx.to, status: tx.status })),
    recordCount: () => chain.recordCount,
    polls: () => pollLog.list(),
    kaiaBalance: (address, block) => balances.kaiaAt(address, block),
    tokenBalance: (token, owner, block) => balances.tokenAt(token, owner, block),
  };
}
