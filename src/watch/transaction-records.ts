import { KaiawatchError } from "../common/errors.js";
import type { ExplorerClient } from "../explorer/client.js";
import { ExplorerHttpError } from "../explorer/errors.js";
import { OPERATIONS } from "../explorer/operations.js";
import { familyOf } from "../families/registry.js";
import { numberTwins } from "./normalize.js";
import type { RecordFamily, WatchedRecord } from "../model/record.js";
import type { SourceDefinition } from "./source.js";

export interface TransactionRecords {
  /** The transaction's records of the family, normalized as the daemon normalizes them, in chain order. */
  records: WatchedRecord[];
  /** The block of the transaction, when known. */
  block: number | undefined;
  /** Which explorer operations answered, for the user ("operation 8 blockInternalTransactions (block 123)"). */
  via: string[];
}

export interface TransactionRecordsOptions {
  family: RecordFamily;
  transactionHash: string;
  /** The transaction's block; internal transactions need it (found from its logs or NFT transfers otherwise). */
  block?: number;
  pageSize: number;
  signal: AbortSignal;
}

/**
 * The records of one transaction, in the shape the daemon's sources produce them, for
 * `kaiawatch explain`:
 * - event logs: operation 10 (transactionEventLogs), the same EventLog as operation 11;
 * - NFT transfers: operation 5 (transactionNftTransfers), the same NftTransfer as 3 and 4;
 * - internal transactions: operation 1 answers a different record (no block, no transaction
 *   index or status, nested from/to), so rules could not be judged on it. Instead the
 *   transaction's block is listed with operation 8 (the same record as operation 7) and
 *   filtered by hash. The block is `options.block`, or read from the transaction's event
 *   logs (10) or NFT transfers (5); operation 1 tells "no such transaction" and "no internal
 *   transactions" apart from "block unknown".
 */
export async function fetchTransactionRecords(client: ExplorerClient, options: TransactionRecordsOptions): Promise<TransactionRecords> {
  const hash = options.transactionHash.toLowerCase();
  const size = options.pageSize;
  const signal = options.signal;
  const via: string[] = [];
  const collect = async <T>(pages: AsyncIterable<{ results: T[] }>): Promise<T[]> => {
    const all: T[] = [];
    for await (const page of pages) all.push(...page.results);
    return all;
  };
  const logsOfTx = async () => {
    via.push("operation 10 transactionEventLogs");
    return collect(client.paginate("transactionEventLogs", { transactionHash: hash, size }, { signal }));
  };
  const transfersOfTx = async () => {
    via.push("operation 5 transactionNftTransfers");
    return collect(client.paginate("transactionNftTransfers", { transactionHash: hash, size }, { signal }));
  };
  const sorted = (records: WatchedRecord[]) => records.sort((a, b) => a.block - b.block || compareOrder(a.order, b.order));

  const family = familyOf(options.family);
  const reader = family.readers.transaction;
  if (reader === undefined) {
    // The explorer has no such list: the daemon reads these from the node, block by block.
    throw new KaiawatchError("KW_WATCH_TX_FROM_NODE", `${options.family} records are read from the node (source ${options.family}), not from the explorer: explain does not read them yet`);
  }
  if ("list" in reader) {
    via.push(`operation ${OPERATIONS[reader.list].number} ${reader.list}`);
    const raws = await collect<unknown>(client.paginate(reader.list, { transactionHash: hash, size }, { signal }));
    // Identical transfers numbered as the daemon numbers them (normalize.ts occurrenceKey).
    const records = numberTwins(sorted(raws.map((raw) => family.normalize(raw as never))));
    return { records, block: records[0]?.block ?? options.block, via };
  }
  let block = options.block;
  if (block === undefined) {
    via.push("operation 1 transactionInternalTransactions");
    let calls: unknown[];
    try {
      calls = await collect(client.paginate("transactionInternalTransactions", { transactionHash: hash, size }, { signal }));
    } catch (error) {
      if (error instanceof ExplorerHttpError && error.status === 404) {
        throw new KaiawatchError("KW_WATCH_TX_NOT_FOUND", `the explorer does not know transaction ${hash} (a typo, another network, or not indexed yet)`, { cause: error });
      }
      throw error;
    }
    if (calls.length === 0) return { records: [], block: undefined, via };
    block = (await logsOfTx())[0]?.block_number ?? (await transfersOfTx())[0]?.block_id;
    if (block === undefined) {
      throw new KaiawatchError(
        "KW_WATCH_TX_BLOCK_UNKNOWN",
        `transaction ${hash} has ${calls.length} internal transactions but no event logs or NFT transfers to read its block from; pass --block with the block the explorer shows for it`,
      );
    }
  }
  via.push(`operation ${OPERATIONS[reader.block].number} ${reader.block} (block ${block})`);
  const items = await collect(client.paginate(reader.block, { blockNumber: block, size }, { signal }));
  const records = sorted(items.filter((item) => item.transaction_hash?.toLowerCase() === hash).map((raw) => family.normalize(raw as never)));
  return { records, block, via };
}

function compareOrder(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/**
 * Why a source's query would not return this record (the server-side filter: the watched
 * account, contract, event signature, collection or token), or undefined when it would.
 */
export function outsideSource(definition: SourceDefinition, record: WatchedRecord): string | undefined {
  const lower = (value: string | undefined) => value?.toLowerCase();
  const address = definition.address;
  switch (definition.operation) {
    case "accountEventLogs": {
      if (record.family !== "event_logs") return `the source lists event logs, not ${record.family}`;
      const contract = lower(record.data.contract_address);
      if (contract !== address) return `emitted by ${contract}, not by the watched contract ${address}`;
      const topic0 = lower(record.data.topics[0]);
      if (definition.signature !== undefined && topic0 !== definition.signature) return `topic0 ${topic0 ?? "(none)"} is not the watched event ${definition.signature}`;
      return undefined;
    }
    case "accountNftTransfers": {
      if (record.family !== "nft_transfers") return `the source lists NFT transfers, not ${record.family}`;
      const { from, to, contract } = record.data;
      if (lower(from) !== address && lower(to) !== address) return `neither from nor to is the watched account ${address}`;
      if (definition.contractAddress !== undefined && lower(contract.contract_address) !== definition.contractAddress) return `collection ${lower(contract.contract_address)} is not the watched nft_contract ${definition.contractAddress}`;
      return undefined;
    }
    case "nftTransfers": {
      if (record.family !== "nft_transfers") return `the source lists NFT transfers, not ${record.family}`;
      const contract = lower(record.data.contract.contract_address);
      if (contract !== address) return `collection ${contract} is not the watched collection ${address}`;
      if (definition.tokenId !== undefined && record.data.token_id !== definition.tokenId) return `token ${record.data.token_id} is not the watched token_id ${definition.tokenId}`;
      return undefined;
    }
    case "accountInternalTransactions": {
      if (record.family !== "internal_transactions") return `the source lists internal transactions, not ${record.family}`;
      if (lower(record.data.from) !== address && lower(record.data.to) !== address) return `neither from nor to is the watched account ${address}`;
      return undefined;
    }
    case "blockInternalTransactions":
      return record.family === "internal_transactions" ? undefined : `the source lists internal transactions, not ${record.family}`;
    case "nodeInternalTransactions": {
      if (record.family !== "internal_transactions") return `the source lists internal transactions, not ${record.family}`;
      // An account watch's share: the calls from or to it, as operation 7; an every_block watch's: every call.
      if (address !== undefined && lower(record.data.from) !== address && lower(record.data.to) !== address) return `neither from nor to is the watched account ${address}`;
      return undefined;
    }
    case "nodeEventLogs": {
      if (record.family !== "event_logs") return `the source lists event logs, not ${record.family}`;
      if (address === undefined) return undefined;
      const contract = lower(record.data.contract_address);
      const topic0 = lower(record.data.topics[0]);
      if (definition.account !== undefined) {
        // A token watch's share: the token's Transfer logs (its rules keep those from or to the account).
        if (contract !== address) return `emitted by ${contract}, not by the watched token ${address}`;
        if (topic0 !== definition.signature) return `topic0 ${topic0 ?? "(none)"} is not the token's Transfer ${definition.signature}`;
        return undefined;
      }
      if (contract !== address) return `emitted by ${contract}, not by the watched contract ${address}`;
      if (definition.topics !== undefined && !definition.topics.includes(topic0 ?? "")) return `topic0 ${topic0 ?? "(none)"} is none of the watched events ${definition.topics.join(", ")}`;
      return undefined;
    }
    case "nodeNftTransfers": {
      if (record.family !== "nft_transfers") return `the source lists NFT transfers, not ${record.family}`;
      const { from, to, contract, token_id } = record.data;
      const collection = lower(contract.contract_address);
      if (definition.account !== undefined) {
        if (lower(from) !== definition.account && lower(to) !== definition.account) return `neither from nor to is the watched account ${definition.account}`;
        if (definition.contractAddress !== undefined && collection !== definition.contractAddress) return `collection ${collection} is not the watched nft_contract ${definition.contractAddress}`;
        return undefined;
      }
      if (address === undefined) return undefined;
      if (collection !== address) return `collection ${collection} is not the watched collection ${address}`;
      if (definition.tokenId !== undefined && token_id !== definition.tokenId) return `token ${token_id} is not the watched token_id ${definition.tokenId}`;
      return undefined;
    }
    case "blockTransactions": {
      if (record.family !== "transactions") return `the source lists top-level transactions, not ${record.family}`;
      if (address === undefined) return undefined;
      const d = record.data;
      if (d.from !== address && d.to !== address && d.fee_payer !== address) return `neither from, to nor the fee payer is the watched account ${address}`;
      return undefined;
    }
  }
}
