import type { EventLog, InternalTransactionListItem, NftTransfer } from "../explorer/types.js";
import { EVENTS, padAddress, uint256Hex } from "./abi.js";
import type { CallRec, LogRec, NftRec, TxInfo } from "./chain.js";
import { nftTransferLog } from "./nft-logs.js";
import type { NftState } from "./nft-state.js";
import type { Prng } from "./prng.js";
import type { World } from "./world.js";

/** Records a test chooses for one block; every field left out gets a plausible default. */
export interface ChosenRecords {
  eventLogs?: Partial<EventLog>[];
  nftTransfers?: Partial<NftTransfer>[];
  internalTransactions?: Partial<InternalTransactionListItem>[];
  /** Top-level transactions (kaia_getBlockReceipts), after the transactions of the records above. */
  transactions?: ChosenTransaction[];
}

/** A top-level transaction a test chooses; its receipt is built from it (receipts-rpc.ts). */
export interface ChosenTransaction {
  /** Shares the transaction of records that name it; default a new one. */
  hash?: string;
  from: string;
  /** "" for a contract creation. */
  to: string;
  /** KAIA, exact decimal; default "0". */
  value?: string;
  /** Call data, 0x-hex. */
  input?: string;
  status?: "Success" | "Fail";
  /** Kaia's receipt error code of a failed transaction (default 0x09, reverted). */
  txError?: number;
  /** What the node's call tracer says (debug_traceTransaction). */
  revertReason?: string;
  feePayer?: string;
  feeRatio?: number;
  /** Kaia's typeInt; default: fee-delegated when feePayer is set, else legacy. */
  typeInt?: number;
  gasUsed?: number;
  /** Kei per gas, decimal. */
  gasPrice?: string;
}

/**
 * The transactions of a block made of exactly the chosen records. Records that name the
 * same `transaction_hash` share a transaction; a record without one gets a transaction of
 * its own. Transaction indexes follow the order in which transactions first appear (event
 * logs, then NFT transfers, then internal transactions); `block_number`/`block_id`,
 * `transaction_index` and `datetime` are always set by the block. A chosen NFT transfer is
 * also a log of its contract (Transfer or TransferSingle), numbered after the chosen logs,
 * as a node would show it.
 */
export function buildChosenBlock(world: World, nft: NftState, p: Prng, block: number, datetime: string, chosen: ChosenRecords): TxInfo[] {
  const txs: TxInfo[] = [];
  const byHash = new Map<string, TxInfo>();
  const txFor = (hash: string | undefined, from: string, to: string): TxInfo => {
    const key = hash?.toLowerCase();
    const existing = key === undefined ? undefined : byHash.get(key);
    if (existing) return existing;
    const tx: TxInfo = { hash: hash ?? `0x${p.hex(32)}`, block, index: txs.length, datetime, from, to, status: "Success", logs: [], nfts: [], calls: [] };
    txs.push(tx);
    byHash.set(tx.hash.toLowerCase(), tx);
    return tx;
  };
  const w0 = world.wallets[0] as string;
  const w1 = world.wallets[1] as string;
  const token0 = (world.tokens[0] as (typeof world.tokens)[number]).address;
  const coll0 = world.collections[0] as (typeof world.collections)[number];

  let nextLogIndex = 0;
  for (const partial of chosen.eventLogs ?? []) {
    const defaults: EventLog = {
      log_index: 0,
      contract_address: token0,
      type: EVENTS.transfer20.name,
      topics: [EVENTS.transfer20.topic0, padAddress(w0), padAddress(w1)],
      data: `0x${uint256Hex(10n ** 18n)}`,
      items: [
        { name: "from", value: w0 },
        { name: "to", value: w1 },
        { name: "value", value: (10n ** 18n).toString() },
      ],
      block_number: block,
    };
    const log: EventLog = { ...defaults, ...partial, block_number: block };
    const tx = txFor(log.transaction_hash, w0, log.contract_address);
    log.transaction_hash = tx.hash;
    if (partial.log_index === undefined) log.log_index = nextLogIndex;
    nextLogIndex = Math.max(nextLogIndex, log.log_index) + 1;
    const rec: LogRec = { block, tx, logIndex: log.log_index, contract: log.contract_address.toLowerCase(), topic0: (log.topics[0] ?? "").toLowerCase(), args: [], custom: log };
    tx.logs.push(rec);
  }

  let nextTokenId = 1_000_000_000 + block * 1000;
  const nftLogs: NftRec[] = [];
  for (const partial of chosen.nftTransfers ?? []) {
    const base = { contract: { contract_address: coll0.address, contract_type: coll0.contractType }, block_id: block, transaction_hash: "", datetime, from: w0, to: w1, token_id: String(nextTokenId++), token_count: "1" };
    const transfer = { ...base, ...partial, block_id: block, datetime } as NftTransfer;
    if (partial.token_count === undefined) (transfer as unknown as { token_count: number }).token_count = 1;
    const tx = txFor(partial.transaction_hash, transfer.from, transfer.contract.contract_address);
    transfer.transaction_hash = tx.hash;
    transfer.transaction_index = tx.index;
    const contract = transfer.contract.contract_address.toLowerCase();
    const tokenId = /^[0-9]+$/.test(String(transfer.token_id)) ? BigInt(transfer.token_id).toString() : String(transfer.token_id);
    const count = Number(transfer.token_count);
    const rec: NftRec = { block, tx, seq: tx.nfts.length, contract, from: transfer.from.toLowerCase(), to: (transfer.to ?? "").toLowerCase(), tokenId, count, custom: transfer };
    tx.nfts.push(rec);
    nftLogs.push(rec);
    // From the text when it is an integer: a chosen count beyond 2^53 must move exactly that many.
    const exactCount = /^[0-9]+$/.test(String(transfer.token_count)) ? BigInt(String(transfer.token_count)) : BigInt(Math.max(0, Math.trunc(count) || 0));
    if (nft.known(contract) && /^[0-9]+$/.test(tokenId) && transfer.to) nft.apply(contract, tokenId, transfer.from, transfer.to, exactCount, datetime);
  }

  // Each transfer is also the log a node shows of it, after the chosen logs' indexes.
  nftLogs.sort((a, b) => a.tx.index - b.tx.index);
  for (const rec of nftLogs) {
    const type = rec.custom?.contract.contract_type ?? world.collections.find((c) => c.address === rec.contract)?.contractType;
    const log = nftTransferLog(rec, type, nextLogIndex);
    if (log === undefined) continue;
    rec.tx.logs.push(log);
    nextLogIndex++;
  }

  for (const partial of chosen.internalTransactions ?? []) {
    const base: InternalTransactionListItem = { call_id: 0, block_id: block, transaction_index: 0, datetime, type: "CALL", from: w0, to: w1, amount: "1", transaction_status: { status: "Success" } };
    const item: InternalTransactionListItem = { ...base, ...partial, block_id: block, datetime };
    const tx = txFor(partial.transaction_hash, item.from, item.to ?? item.from);
    item.transaction_hash = tx.hash;
    item.transaction_index = tx.index;
    if (partial.call_id === undefined) item.call_id = tx.calls.reduce((max, c) => Math.max(max, c.callId + 1), 0);
    if (item.transaction_status?.status === "Fail") {
      tx.status = "Fail";
      if (item.transaction_status.fail_message !== undefined) tx.failMessage = item.transaction_status.fail_message;
    }
    const rec: CallRec = { block, tx, callId: item.call_id, level: 0, type: item.type, from: item.from.toLowerCase(), amount: item.amount, gasLimit: 0, custom: item };
    if (item.to !== undefined) rec.to = item.to.toLowerCase();
    if (item.error !== undefined) rec.error = item.error;
    tx.calls.push(rec);
  }

  for (const chosenTx of chosen.transactions ?? []) {
    const tx = txFor(chosenTx.hash, chosenTx.from, chosenTx.to);
    tx.from = chosenTx.from;
    tx.to = chosenTx.to;
    tx.value = chosenTx.value ?? "0";
    if (chosenTx.input !== undefined) tx.input = chosenTx.input;
    if (chosenTx.status !== undefined) tx.status = chosenTx.status;
    if (chosenTx.txError !== undefined) tx.txError = chosenTx.txError;
    if (chosenTx.revertReason !== undefined) tx.revertReason = chosenTx.revertReason;
    if (chosenTx.feePayer !== undefined) tx.feePayer = chosenTx.feePayer;
    if (chosenTx.feeRatio !== undefined) tx.feeRatio = chosenTx.feeRatio;
    tx.typeInt = chosenTx.typeInt ?? (chosenTx.feePayer === undefined ? 0 : chosenTx.input !== undefined && chosenTx.input !== "0x" ? 49 : 9);
    if (chosenTx.gasUsed !== undefined) tx.gasUsed = chosenTx.gasUsed;
    if (chosenTx.gasPrice !== undefined) tx.gasPrice = chosenTx.gasPrice;
  }

  for (const tx of txs) {
    tx.logs.sort((a, b) => a.logIndex - b.logIndex);
    tx.calls.sort((a, b) => a.callId - b.callId);
  }
  return txs;
}
