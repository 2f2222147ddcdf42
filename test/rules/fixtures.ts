import type { EventLog, InternalTransactionListItem, NftTransfer } from "../../src/explorer/types.js";
import type { WatchedRecord } from "../../src/model/record.js";

/** Records shaped like the explorer's answers on mainnet (addresses in mixed case, as served). */
export const HOT_WALLET = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
export const EXCHANGE = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
export const TOKEN = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";
export const COLLECTION = "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb";
export const ZERO = "0x0000000000000000000000000000000000000000";
export const DEAD = "0x000000000000000000000000000000000000dEaD";
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
export const APPROVAL_TOPIC = "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925";
export const TX = "0x7f3a0e6d1c2b9a8f4e5d6c7b8a9f0e1d2c3b4a5968778695a4b3c2d1e0f1a2b3";

export const topicOf = (address: string) => `0x${"0".repeat(24)}${address.slice(2).toLowerCase()}`;

export function eventLog(overrides: Partial<EventLog> = {}, block = 160_000_123): WatchedRecord {
  const data: EventLog = {
    log_index: 4,
    contract_address: TOKEN,
    type: "Transfer",
    topics: [TRANSFER_TOPIC, topicOf(HOT_WALLET), topicOf(EXCHANGE)],
    data: "0x00000000000000000000000000000000000000000000003635c9adc5dea00000",
    items: [
      { name: "from", value: HOT_WALLET },
      { name: "to", value: EXCHANGE },
      { name: "value", value: "1000000000000000000000" },
    ],
    block_number: block,
    transaction_hash: TX,
    ...overrides,
  };
  return { family: "event_logs", block: data.block_number, transactionHash: data.transaction_hash, key: `${block}:${TX}:${data.log_index}`, order: [data.log_index], data };
}

export function nftTransfer(overrides: Partial<NftTransfer> = {}, block = 160_000_200): WatchedRecord {
  const data: NftTransfer = {
    contract: { contract_address: COLLECTION, contract_type: "KIP17" },
    block_id: block,
    transaction_hash: TX,
    transaction_index: 2,
    datetime: "2025-03-01T12:00:00.000Z",
    from: EXCHANGE,
    to: HOT_WALLET,
    token_id: "42",
    token_count: "1",
    ...overrides,
  };
  const key = [block, TX, data.contract.contract_address, data.token_id, data.from, data.to ?? "", data.token_count].join(":").toLowerCase();
  return { family: "nft_transfers", block, transactionHash: data.transaction_hash, key, order: [data.transaction_index ?? 0], data };
}

export function internalTx(overrides: Partial<InternalTransactionListItem> = {}, block = 160_000_300): WatchedRecord {
  const data: InternalTransactionListItem = {
    call_id: 1,
    block_id: block,
    transaction_hash: TX,
    transaction_index: 7,
    datetime: "2025-03-01T12:05:00.000Z",
    type: "CALL",
    from: HOT_WALLET,
    to: EXCHANGE,
    amount: "1500",
    method_id: "0xa9059cbb",
    signature: "transfer",
    transaction_status: { status: "Success" },
    ...overrides,
  };
  return { family: "internal_transactions", block, transactionHash: data.transaction_hash, key: `${block}:${TX}:${data.call_id}`, order: [data.transaction_index, data.call_id], data };
}
