import type { AlertDocument } from "../../src/model/alert-document.js";
import type { Delivery } from "../../src/notify/sink.js";

/** Strings a stranger can put on chain (token names, metadata, revert messages). */
export const HOSTILE = {
  slackMention: "<!channel> <!here> <@U024BE7LH>",
  slackLink: "<http://evil.example/|https://kaiascan.io/safe>",
  script: "<script>alert(1)</script>",
  discordMention: "@everyone @here <@123456789> [click](http://evil.example)",
  crlf: "line1\r\nBcc: victim@example.com\r\nX-Evil: 1",
  bidi: "invoice\u202Egpj.exe",
  zeroWidth: "US\u200BD\u200DT\uFEFF",
  huge: "A".repeat(100_000),
} as const;

export const HOSTILE_NAME = Object.values(HOSTILE).filter((s) => s !== HOSTILE.huge).join(" | ");

export const CONTRACT = "0x5c74070fdea071359b86082bd9f9b3deaafbe32b";
export const TX = `0x${"ab".repeat(32)}`;

let counter = 0;

export function nftAlert(overrides: Partial<AlertDocument> = {}, name: string = HOSTILE_NAME): AlertDocument {
  counter += 1;
  return {
    version: 1,
    id: `alert-${counter}`,
    rule: "collection-feed",
    watch: "collection",
    source: "nft_transfers",
    network: "mainnet",
    block: 150_000_000 + counter,
    transaction_hash: TX,
    datetime: "2024-06-01T12:00:00.000Z",
    summary: `Transfer of ${name} #7 from 0x1111111111111111111111111111111111111111`,
    links: { transaction: `https://kaiascan.io/tx/${TX}`, block: `https://kaiascan.io/block/${150_000_000 + counter}`, contract: `https://kaiascan.io/nft/${CONTRACT}` },
    record: {
      contract: { contract_address: CONTRACT, contract_type: "KIP17" },
      block_id: 150_000_000 + counter,
      transaction_hash: TX,
      datetime: "2024-06-01T12:00:00.000Z",
      from: "0x1111111111111111111111111111111111111111",
      to: "0x2222222222222222222222222222222222222222",
      token_id: "7",
      token_count: "1",
    },
    enrichment: { token: { name, symbol: name, contract_address: CONTRACT } },
    created_at: "2024-06-01T12:00:01.000Z",
    ...overrides,
  };
}

export function single(alert: AlertDocument = nftAlert(), attempt = 1): Delivery {
  return { id: `delivery-${alert.id}`, rule: alert.rule, alerts: [alert], attempt };
}

export function digest(count: number, name: string = HOSTILE_NAME): Delivery {
  const alerts = Array.from({ length: count }, () => nftAlert({}, name));
  return { id: `digest-${counter}`, rule: "collection-feed", alerts, attempt: 1 };
}

/** Characters that must never reach a message: bidi controls and zero-width characters. */
export const INVISIBLE_OR_BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C\u200B-\u200D\u2060\uFEFF]/;
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
