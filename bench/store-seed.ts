/**
 * Fills a store with what a busy NFT-transfer feed leaves behind: delivered alerts (and
 * pending ones) of about 1 KB each, written in bulk through the store's own import (one
 * transaction), for the store benchmark and for the crash tests that run on a full store.
 */
import BetterSqlite3 from "better-sqlite3";
import { createTestCommon } from "../src/common/common.js";
import { ALERT_DOCUMENT_VERSION, type AlertDocument } from "../src/model/alert-document.js";
import { openStore } from "../src/store/open-store.js";
import { importAll } from "../src/store/sqlite-schema.js";
import type { OutboxEntry } from "../src/model/outbox-entry.js";

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0").slice(-width);

/** An NFT-transfer alert as the daemon writes it: about 1 KB of JSON. */
export function nftTransferAlert(n: number, at: string): AlertDocument {
  const tx = `0x${hex(n * 2654435761, 16).repeat(4)}`;
  const collection = `0x${"c0ffee".padEnd(40, "0")}`;
  const block = 150_000_000 + Math.floor(n / 4);
  return {
    version: ALERT_DOCUMENT_VERSION,
    id: `alr_seed_${hex(n, 12)}`,
    rule: "collection-transfers",
    watch: "collection",
    source: "nft_transfers",
    network: "mainnet",
    block,
    transaction_hash: tx,
    datetime: at,
    summary: `Kaia Kitties #${n % 10_000} moved from 0x${hex(n, 40)} to 0x${hex(n + 1, 40)}`,
    links: {
      transaction: `https://kaiascan.io/tx/${tx}`,
      block: `https://kaiascan.io/block/${block}`,
      token: `https://kaiascan.io/nft/${collection}/${n % 10_000}`,
    },
    record: {
      contract: { contract_address: collection, contract_type: "KIP17" },
      block_id: block,
      transaction_hash: tx,
      transaction_index: n % 50,
      datetime: at,
      from: `0x${hex(n, 40)}`,
      to: `0x${hex(n + 1, 40)}`,
      token_id: String(n % 10_000),
      token_count: "1",
    },
    enrichment: { nft: { name: "Kaia Kitties", symbol: "KITTY", verified: true, token_uri: `ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/${n % 10_000}.json` } },
    created_at: at,
  };
}

/** Outbox entries of `count` alerts, each for every one of `sinks` (one entry per alert and sink), in `state`. */
export function* seedEntries(options: { count: number; from?: number; state: "delivered" | "pending"; at: string; sinks?: string[] }): Generator<OutboxEntry> {
  const sinks = options.sinks ?? ["slack"];
  const from = options.from ?? 0;
  for (let i = 0; i < options.count; i++) {
    const alert = nftTransferAlert(from + i, options.at);
    for (const sink of sinks) yield seedEntry(alert, sink, options);
  }
}

function seedEntry(alert: AlertDocument, sink: string, options: { state: "delivered" | "pending"; at: string }): OutboxEntry {
  const entry: OutboxEntry = {
    id: `${alert.id}:${sink}`,
    alert,
    sink,
    rule: alert.rule,
    state: options.state,
    attempts: options.state === "delivered" ? 1 : 0,
    created_at: options.at,
    next_attempt_at: options.at,
  };
  if (options.state === "delivered") entry.delivered_at = options.at;
  return entry;
}

/**
 * Adds `delivered` delivered and `pending` pending alerts, each with an entry for every sink
 * of `sinks`, to the store at `path` (created if missing), in one transaction, on a closed
 * store. Pending entries for a sink that is not configured stay where they are.
 */
export async function seedStore(path: string, options: { delivered: number; pending?: number; at?: string; sinks?: string[] }): Promise<void> {
  const store = await openStore(createTestCommon(), { path });
  await store.close();
  const at = options.at ?? new Date().toISOString();
  const db = new BetterSqlite3(path);
  try {
    // A bulk load, not the daemon's commits: straight into the file, one fsync at the end.
    db.pragma("journal_mode = DELETE");
    db.pragma("synchronous = OFF");
    db.pragma("cache_size = -262144");
    importAll(db, { cursors: [], outbox: seedEntries({ count: options.delivered, state: "delivered", at, sinks: options.sinks }) });
    if (options.pending) importAll(db, { cursors: [], outbox: seedEntries({ count: options.pending, from: options.delivered, state: "pending", at, sinks: options.sinks }) });
    db.pragma("synchronous = FULL");
    db.pragma("journal_mode = WAL");
  } finally {
    db.close();
  }
}
