import type { EventLog, NftTransfer } from "../explorer/types.js";
import type { EventDecoder } from "./event-abi.js";
import type { NodeLog } from "./get-logs.js";
import { eventTopic } from "./signatures.js";

/*
 * The explorer's records built from the node's logs, field for field as the explorer gives
 * them, so that a log read from either source is the same record under the same identity.
 */

/** The event log the explorer's operation 11 lists for this log: decoded when a signature fits, else "Unknown" with no items. */
export function eventLogOf(log: NodeLog, decoder: EventDecoder): EventLog {
  const decoded = decoder.decode(log);
  return {
    log_index: log.logIndex,
    contract_address: log.address,
    type: decoded?.name ?? "Unknown",
    topics: [...log.topics],
    data: log.data,
    items: decoded?.items ?? [],
    block_number: log.blockNumber,
    transaction_hash: log.transactionHash,
  };
}

const TRANSFER = eventTopic("Transfer(address,address,uint256)");
const TRANSFER_SINGLE = eventTopic("TransferSingle(address,address,address,uint256,uint256)");
const TRANSFER_BATCH = eventTopic("TransferBatch(address,address,address,uint256[],uint256[])");
const TOPIC_ADDRESS = /^0x0{24}([0-9a-f]{40})$/;
const MAX_BATCH = 1024;

function addressOf(topic: string | undefined): string | undefined {
  const m = TOPIC_ADDRESS.exec(topic ?? "");
  return m ? `0x${m[1] as string}` : undefined;
}

/** The data's 32-byte words as unsigned integers, or undefined when it is not whole words. */
function words(data: string): bigint[] | undefined {
  const body = data.slice(2);
  if (body.length % 64 !== 0) return undefined;
  const out: bigint[] = [];
  for (let i = 0; i < body.length; i += 64) out.push(BigInt(`0x${body.slice(i, i + 64)}`));
  return out;
}

/** A dynamic uint256[] of the data, from its offset word. */
function uintArray(w: bigint[], offsetWord: bigint | undefined): bigint[] | undefined {
  if (offsetWord === undefined || offsetWord % 32n !== 0n) return undefined;
  const at = Number(offsetWord / 32n);
  const length = w[at];
  if (length === undefined || length > BigInt(MAX_BATCH) || at + 1 + Number(length) > w.length) return undefined;
  return w.slice(at + 1, at + 1 + Number(length));
}

/**
 * The NFT transfers the explorer lists for this log (operations 3 and 4): one for a KIP-17/
 * ERC-721 Transfer (four topics: the id indexed), one for a KIP-37/ERC-1155 TransferSingle,
 * one per id, in order, for a TransferBatch; none for any other log, or one whose topics or
 * data do not have the standard's shape. The contract's type (KIP17 or ERC721, …) is not
 * in the log: it is left out. `datetime` is the block's time.
 */
export function nftTransfersOf(log: NodeLog, datetime: string): NftTransfer[] {
  const [topic0] = log.topics;
  const transfer = (from: string, to: string, tokenId: bigint, count: bigint): NftTransfer => ({
    contract: { contract_address: log.address },
    block_id: log.blockNumber,
    transaction_hash: log.transactionHash,
    transaction_index: log.transactionIndex,
    datetime,
    from,
    to,
    token_id: tokenId.toString(),
    token_count: count.toString(),
  });
  if (topic0 === TRANSFER && log.topics.length === 4) {
    const from = addressOf(log.topics[1]);
    const to = addressOf(log.topics[2]);
    if (from === undefined || to === undefined || log.data !== "0x") return [];
    return [transfer(from, to, BigInt(log.topics[3] as string), 1n)];
  }
  if ((topic0 === TRANSFER_SINGLE || topic0 === TRANSFER_BATCH) && log.topics.length === 4) {
    const from = addressOf(log.topics[2]);
    const to = addressOf(log.topics[3]);
    const w = words(log.data);
    if (from === undefined || to === undefined || w === undefined) return [];
    if (topic0 === TRANSFER_SINGLE) return w.length === 2 ? [transfer(from, to, w[0] as bigint, w[1] as bigint)] : [];
    const ids = uintArray(w, w[0]);
    const values = uintArray(w, w[1]);
    if (ids === undefined || values === undefined || ids.length !== values.length) return [];
    return ids.map((id, i) => transfer(from, to, id, values[i] as bigint));
  }
  return [];
}
