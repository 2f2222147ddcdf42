import type { ContractType, EventLog, InternalTransactionListItem, NftTransfer } from "../explorer/types.js";
import type { EventSpec, FunctionSpec } from "./abi.js";

/** A transaction and the records it produced, in their on-chain order. */
export interface TxInfo {
  hash: string;
  block: number;
  index: number;
  datetime: string;
  from: string;
  to: string;
  feePayer?: string;
  status: "Success" | "Fail";
  failMessage?: string;
  /** Set by a test's chosen top-level transaction (addBlock `transactions`); else derived (receipts-rpc.ts). */
  value?: string;
  input?: string;
  typeInt?: number;
  feeRatio?: number;
  txError?: number;
  revertReason?: string;
  gasUsed?: number;
  /** Kei per gas, decimal. */
  gasPrice?: string;
  logs: LogRec[];
  nfts: NftRec[];
  calls: CallRec[];
}

/**
 * The records are kept compact (the API objects are built only for the page being served),
 * so that a chain of millions of records fits in memory. `custom` holds a record a test
 * chose through `addBlock`, served as given.
 */
export interface LogRec {
  block: number;
  tx: TxInfo;
  logIndex: number;
  contract: string;
  topic0: string;
  event?: EventSpec;
  /** Decoded values for `event`; for an unknown event: the raw topics after topic0, then the data. */
  args: string[];
  custom?: EventLog;
}

export interface NftRec {
  block: number;
  tx: TxInfo;
  seq: number;
  contract: string;
  contractType?: ContractType;
  from: string;
  to: string;
  tokenId: string;
  count: number;
  custom?: NftTransfer;
}

export interface CallRec {
  block: number;
  tx: TxInfo;
  callId: number;
  parentCallId?: number;
  level: number;
  type: string;
  from: string;
  to?: string;
  /** KAIA, exact decimal. */
  amount: string;
  gasLimit: number;
  fn?: FunctionSpec;
  fnArgs?: string[];
  output?: string;
  error?: string;
  /** On the call that reverted: the revert reason. */
  revertMessage?: string;
  custom?: InternalTransactionListItem;
}

/** Records in ascending chain order, found by block range in O(log n). */
export class BlockIndex<R extends { block: number }> {
  readonly items: R[] = [];

  push(record: R): void {
    this.items.push(record);
  }

  /** The first position whose block is >= `block`. */
  lowerBound(block: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.items[mid] as R).block < block) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** [lo, hi) of the records with from <= block <= to. */
  range(from: number, to: number): [number, number] {
    if (to < from) return [0, 0];
    return [this.lowerBound(from), this.lowerBound(to + 1)];
  }
}

export interface BlockInfo {
  number: number;
  datetime: string;
  txs: TxInfo[];
  /** Internal transactions in the API's order: transaction index descending, call id ascending. */
  calls: CallRec[];
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = create()));
  return value;
}

/**
 * The indexed chain. Every index is an append-only array in ascending chain order whose
 * reverse is the API's newest-first order, so a page is a slice found by binary search:
 * O(log n + page), whatever the chain's size.
 */
export class Chain {
  readonly blocks: BlockInfo[] = [];
  readonly txs = new Map<string, TxInfo>();
  readonly logsByContract = new Map<string, BlockIndex<LogRec>>();
  readonly logsByContractTopic = new Map<string, BlockIndex<LogRec>>();
  readonly nftsByAccount = new Map<string, BlockIndex<NftRec>>();
  readonly nftsByAccountContract = new Map<string, BlockIndex<NftRec>>();
  readonly nftsByContract = new Map<string, BlockIndex<NftRec>>();
  readonly nftsByContractToken = new Map<string, BlockIndex<NftRec>>();
  /** Appended per transaction in call id DESCENDING order, so that reversing gives call id ascending within a transaction. */
  readonly callsByAccount = new Map<string, BlockIndex<CallRec>>();
  recordCount = 0;

  constructor(readonly startBlock: number) {}

  /** The last block, or startBlock - 1 before the first. */
  get head(): number {
    return this.startBlock + this.blocks.length - 1;
  }

  block(number: number): BlockInfo | undefined {
    return this.blocks[number - this.startBlock];
  }

  tx(hash: string): TxInfo | undefined {
    return this.txs.get(hash.toLowerCase());
  }

  /** Appends the next block; `txs` are in transaction index order with their records sorted. */
  append(datetime: string, txs: TxInfo[]): number {
    const number = this.head + 1;
    const idx = <R extends { block: number }>(map: Map<string, BlockIndex<R>>, key: string) => getOrCreate(map, key, () => new BlockIndex<R>());
    for (const tx of txs) {
      this.txs.set(tx.hash.toLowerCase(), tx);
      for (const log of tx.logs) {
        idx(this.logsByContract, log.contract).push(log);
        idx(this.logsByContractTopic, `${log.contract}|${log.topic0}`).push(log);
      }
      for (const nft of tx.nfts) {
        idx(this.nftsByAccount, nft.from).push(nft);
        idx(this.nftsByAccountContract, `${nft.from}|${nft.contract}`).push(nft);
        if (nft.to !== nft.from) {
          idx(this.nftsByAccount, nft.to).push(nft);
          idx(this.nftsByAccountContract, `${nft.to}|${nft.contract}`).push(nft);
        }
        idx(this.nftsByContract, nft.contract).push(nft);
        idx(this.nftsByContractToken, `${nft.contract}|${nft.tokenId}`).push(nft);
      }
      for (let i = tx.calls.length - 1; i >= 0; i--) {
        const call = tx.calls[i] as CallRec;
        idx(this.callsByAccount, call.from).push(call);
        if (call.to !== undefined && call.to !== call.from) idx(this.callsByAccount, call.to).push(call);
      }
      this.recordCount += tx.logs.length + tx.nfts.length + tx.calls.length;
    }
    const calls: CallRec[] = [];
    for (let i = txs.length - 1; i >= 0; i--) calls.push(...(txs[i] as TxInfo).calls);
    this.blocks.push({ number, datetime, txs, calls });
    return number;
  }
}
