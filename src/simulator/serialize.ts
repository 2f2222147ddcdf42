import type { AccountNftInventory, EventLog, InternalTransactionListItem, InternalTransactionOfTransaction, NftInventoryDetail, NftItem, NftMetadata, NftTransfer } from "../explorer/types.js";
import { padAddress, uint256Hex } from "./abi.js";
import type { CallRec, LogRec, NftRec } from "./chain.js";
import type { NftState, NftToken } from "./nft-state.js";
import type { Collection, World } from "./world.js";

/*
 * The API objects, built only for the records being served. Optional fields are set only
 * when they have a value: the real service omits nulls, and so does JSON.stringify with
 * fields never assigned.
 */

export function eventLogJson(rec: LogRec): EventLog {
  if (rec.custom) return { ...rec.custom };
  const ev = rec.event;
  if (!ev) {
    return {
      log_index: rec.logIndex,
      contract_address: rec.contract,
      type: "Unknown",
      topics: [rec.topic0, ...rec.args.slice(0, -1)],
      data: rec.args.at(-1) ?? "0x",
      items: [],
      block_number: rec.block,
      transaction_hash: rec.tx.hash,
    };
  }
  const topics = [ev.topic0];
  let data = "0x";
  ev.params.forEach((param, i) => {
    const value = rec.args[i] ?? "0";
    if (param.indexed) topics.push(param.type === "address" ? padAddress(value) : `0x${uint256Hex(value)}`);
    else data += param.type === "address" ? padAddress(value).slice(2) : uint256Hex(value);
  });
  const out: EventLog = {
    log_index: rec.logIndex,
    contract_address: rec.contract,
    type: ev.name,
    topics,
    data,
    items: ev.params.map((param, i) => ({ name: param.name, value: rec.args[i] ?? "0" })),
    block_number: rec.block,
    transaction_hash: rec.tx.hash,
  };
  if (ev.estimated) out.estimated_event_log = true;
  return out;
}

export function nftTransferJson(rec: NftRec): NftTransfer {
  if (rec.custom) return { ...rec.custom };
  const out = {
    contract: rec.contractType === undefined ? { contract_address: rec.contract } : { contract_address: rec.contract, contract_type: rec.contractType },
    block_id: rec.block,
    transaction_hash: rec.tx.hash,
  } as NftTransfer;
  if (rec.tx.feePayer) out.fee_payer = rec.tx.feePayer;
  out.transaction_index = rec.tx.index;
  out.datetime = rec.tx.datetime;
  out.from = rec.from;
  out.to = rec.to;
  out.token_id = rec.tokenId;
  // The spec types token_count as an integer; the counts here stay far below 2^53.
  (out as unknown as { token_count: number }).token_count = rec.count;
  return out;
}

export function internalTxJson(rec: CallRec): InternalTransactionListItem {
  if (rec.custom) return { ...rec.custom };
  const tx = rec.tx;
  const out = { call_id: rec.callId, block_id: rec.block, transaction_hash: tx.hash, transaction_index: tx.index } as InternalTransactionListItem;
  if (tx.feePayer) out.fee_payer = tx.feePayer;
  out.datetime = tx.datetime;
  out.type = rec.type;
  out.from = rec.from;
  if (rec.to !== undefined) out.to = rec.to;
  out.amount = rec.amount;
  if (rec.error !== undefined) out.error = rec.error;
  if (rec.fn) {
    out.method_id = rec.fn.methodId;
    out.signature = rec.fn.signature;
  }
  out.transaction_status = tx.status === "Fail" ? { status: "Fail", fail_message: tx.failMessage ?? "execution reverted" } : { status: "Success" };
  return out;
}

/** The calldata of a call to a known function (selector and encoded arguments), else undefined. */
export function callInput(rec: CallRec): string | undefined {
  const fn = rec.fn;
  if (!fn) return undefined;
  const encoded = fn.params
    .map((param, i) => {
      const v = rec.fnArgs?.[i] ?? "0";
      if (param.type === "address") return padAddress(v).slice(2);
      if (param.type === "uint256") return uint256Hex(v);
      return uint256Hex(BigInt(32 * fn.params.length));
    })
    .join("");
  return `${fn.methodId}${encoded}`;
}

/**
 * A call of operation 1. Its `from`/`to` are plain addresses in the predecessor's release
 * (InternalTransactionLeveledListView) and account summaries in the document's.
 */
export function callOfTransactionJson(world: World, rec: CallRec, parties: "address" | "summary"): InternalTransactionOfTransaction {
  const party = (a: string) => (parties === "address" ? a : world.summary(a));
  // The fields every call starts with, in the service's order, from a test's own call or a generated one.
  const head = (call: Pick<InternalTransactionListItem, "call_id" | "type" | "from" | "to" | "amount">): InternalTransactionOfTransaction => {
    const out = { call_id: call.call_id } as InternalTransactionOfTransaction;
    if (rec.parentCallId !== undefined) out.parent_call_id = rec.parentCallId;
    out.level = rec.level;
    out.type = call.type;
    out.from = party(call.from);
    if (call.to !== undefined) out.to = party(call.to);
    out.amount = call.amount;
    return out;
  };
  if (rec.custom) {
    const c = rec.custom;
    const out = head(c);
    if (c.error !== undefined) out.error = c.error;
    if (c.transaction_status?.status === "Fail" && c.error !== undefined) out.reverted = { contract: c.to ?? c.from, message: c.transaction_status.fail_message ?? c.error };
    return out;
  }
  const out = head({ call_id: rec.callId, type: rec.type, from: rec.from, to: rec.to, amount: rec.amount });
  out.gas_limit = rec.gasLimit;
  const original = callInput(rec);
  if (rec.fn && original !== undefined) {
    out.input_data = {
      original_value: original,
      decoded_value: {
        signature: rec.fn.signature,
        method_id: rec.fn.methodId,
        parameters: rec.fn.params.map((param, i) => ({ type: param.type, ...(param.name ? { name: param.name } : {}), value: rec.fnArgs?.[i] ?? "" })),
      },
      // What the real service shows: the calldata bytes read as UTF-8, unprintable and all.
      utf8_value: Buffer.from(original.slice(2), "hex").toString("utf8"),
    };
  }
  if (rec.output !== undefined) out.output_data = rec.output;
  if (rec.error !== undefined) out.error = rec.error;
  if (rec.revertMessage !== undefined) out.reverted = { contract: rec.to ?? rec.from, message: rec.revertMessage };
  return out;
}

/**
 * An integer the spec types as a JSON number. JSON.stringify cannot write one beyond 2^53
 * exactly, so such a value goes out as exact decimal text (which clients accept, as they do
 * for amounts) instead of a rounded float.
 */
function jsonInteger(value: bigint | string): number | string {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : String(value);
}

function metadataJson(token: NftToken): NftMetadata | undefined {
  const m = token.meta;
  if (!m.uri) return undefined;
  const out: NftMetadata = { id: token.id, contract_address: token.contract, token_id: token.tokenId } as NftMetadata;
  const doc: Record<string, string> = {};
  if (m.name !== undefined) doc.name = m.name;
  if (m.description !== undefined) doc.description = m.description;
  if (m.image !== undefined) doc.image = m.image;
  if (m.externalUrl !== undefined) doc.external_url = m.externalUrl;
  out.metadata = JSON.stringify(doc);
  if (m.image !== undefined) out.image = m.image;
  if (m.externalUrl !== undefined) out.external_url = m.externalUrl;
  if (m.description !== undefined) out.description = m.description;
  if (m.name !== undefined) out.name = m.name;
  if (m.image !== undefined) out.display_image = m.image;
  out.last_updated = token.lastUpdated;
  // The spec types token_id as an integer here (a test's chosen id may pass 2^53).
  (out as unknown as { token_id: number | string }).token_id = jsonInteger(token.tokenId);
  return out;
}

export function nftInfoJson(nft: NftState, collection: Collection) {
  const out: Record<string, unknown> = { symbol: collection.symbol, name: collection.name, contract_address: collection.address, decimal: 0, verified: collection.verified, total_supply: jsonInteger(nft.supply(collection.address)) };
  if (collection.implementation) out.implementation_address = collection.implementation;
  return out;
}

export function nftItemJson(world: World, nft: NftState, collection: Collection, token: NftToken): NftItem {
  const out = { contract_type: collection.contractType, info: nftInfoJson(nft, collection), token_id: token.tokenId, token_uri: token.meta.uri } as unknown as Record<string, unknown>;
  const holders = [...token.holders.keys()];
  if (!collection.multi && holders[0] !== undefined) out.holder = world.summary(holders[0]);
  if (collection.multi) out.total_supply = jsonInteger(token.minted - token.burned);
  out.total_transfer = token.transfers;
  if (collection.multi) out.burn_amount = jsonInteger(token.burned);
  out.total_burn = Number(token.burned);
  const metadata = metadataJson(token);
  if (metadata) out.metadata = metadata;
  out.is_burned = token.holders.size === 0 && token.burned > 0n;
  return out as unknown as NftItem;
}

export function inventoryDetailJson(world: World, collection: Collection, token: NftToken, holder: string, count: bigint): NftInventoryDetail {
  const out = { contract_type: collection.contractType, token_id: token.tokenId, holder: world.summary(holder), token_uri: token.meta.uri } as unknown as Record<string, unknown>;
  out.token_count = jsonInteger(count);
  const metadata = metadataJson(token);
  if (metadata) out.metadata = metadata;
  return out as unknown as NftInventoryDetail;
}

/** `nft_type` inside `nft` as the document has it, or beside it as the predecessor's account NFT balances have their contract's type. */
export function accountInventoryJson(nft: NftState, collection: Collection, token: NftToken, count: bigint, nftType: "beside" | "inside"): AccountNftInventory {
  const info = nftInfoJson(nft, collection);
  const out =
    nftType === "inside"
      ? { nft: { ...info, nft_type: collection.contractType }, token_id: token.tokenId, token_uri: token.meta.uri, token_count: jsonInteger(count) }
      : { nft: info, nft_type: collection.contractType, token_id: token.tokenId, token_uri: token.meta.uri, token_count: jsonInteger(count) };
  return out as unknown as AccountNftInventory;
}
