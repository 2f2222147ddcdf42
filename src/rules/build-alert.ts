import { createHash } from "node:crypto";
import { ZERO_ADDRESS, isAddress, isBurnAddress } from "../chain/address.js";
import { formatKei } from "../chain/units.js";
import { formatTokenAmount } from "../chain/token-amounts.js";
import type { TokenInfo } from "../chain/token-info.js";
import { decodeTokenTransfer, type TokenTransferValues } from "../chain/token-transfer.js";
import type { WatchedRecord } from "../model/record.js";
import type { AlertDocument, AlertSeverity } from "../model/alert-document.js";
import { ALERT_DOCUMENT_VERSION } from "../model/alert-document.js";
import { amountKeiOf } from "./record-values.js";
import { truncate } from "../common/text.js";
import { oneLine, readPath, renderTemplate } from "./summary-template.js";
import { tokenSymbolText } from "./token-symbol.js";

export interface BuildAlertInput {
  rule: { name: string; summary?: string; severity?: AlertSeverity };
  /** The alert's labels (alertLabels in src/notify/labels.ts: fixed by the rule and its source). */
  labels?: Readonly<Record<string, string>>;
  watch: string;
  record: WatchedRecord;
  network: string;
  /** e.g. https://kaiascan.io; links are built under it. */
  explorerUrl: string;
  now: Date;
  /** The account an account watch watches: the account link and `direction`. */
  watchedAccount?: string;
  /** A token watch's token: its Transfer logs are written as token amounts with its symbol. */
  token?: TokenInfo;
}

/**
 * The alert id: stable for the same rule and record across retries, restarts and rescans,
 * so that receivers can drop a rare duplicate. "kw_" + the first 32 hex digits (128 bits)
 * of sha256(rule name, NUL, record key).
 */
export function alertId(ruleName: string, recordKey: string): string {
  return `kw_${createHash("sha256").update(ruleName).update("\u0000").update(recordKey).digest("hex").slice(0, 32)}`;
}

/** Turns a matched record into the alert document that the outbox stores and sinks send. */
export function buildAlert(input: BuildAlertInput): AlertDocument {
  const { record } = input;
  const links = buildLinks(input);
  const base: Omit<AlertDocument, "summary"> = {
    version: ALERT_DOCUMENT_VERSION,
    id: alertId(input.rule.name, record.key),
    rule: input.rule.name,
    watch: input.watch,
    source: record.family,
    network: input.network,
    block: record.block,
    transaction_hash: record.transactionHash ?? null,
    datetime: recordDatetime(record),
    links,
    record: record.data,
    ...(input.labels === undefined ? {} : { labels: { ...input.labels } }),
    created_at: input.now.toISOString(),
  };
  const transfer = input.token && record.family === "event_logs" ? decodeTokenTransfer(record.data) : undefined;
  if (input.token && transfer) {
    base.token = { address: input.token.address, symbol: input.token.symbol === undefined ? null : tokenSymbolText(input.token.symbol), decimals: input.token.decimals, amount: formatTokenAmount(transfer.value, input.token.decimals) };
  }
  const fallback = input.token && transfer ? tokenTransferSummary(input.token, transfer, input.watchedAccount) : defaultSummary(record, input.watchedAccount);
  const summary =
    input.rule.summary === undefined
      ? fallback
      : renderTemplate(input.rule.summary, (name) => templateValue(name, { ...base, summary: fallback }, record, input.watchedAccount, transfer));
  return { ...base, summary, ...(input.rule.severity === undefined ? {} : { severity: input.rule.severity }) };
}

function recordDatetime(record: WatchedRecord): string | null {
  switch (record.family) {
    case "nft_transfers":
      return record.data.datetime;
    case "internal_transactions":
      return record.data.datetime ?? null;
    case "event_logs":
    case "transactions":
      return null;
  }
}

function buildLinks(input: BuildAlertInput): AlertDocument["links"] {
  const base = input.explorerUrl.replace(/\/+$/, "");
  const seg = encodeURIComponent;
  const { record } = input;
  const links: AlertDocument["links"] = { block: `${base}/block/${record.block}` };
  if (record.transactionHash) links.transaction = `${base}/tx/${seg(record.transactionHash)}`;
  let account = input.watchedAccount;
  switch (record.family) {
    case "event_logs": {
      const d = record.data;
      links.contract = `${base}/account/${seg(d.contract_address)}`;
      // Three topics is the fungible-token shape (an ERC721 Transfer carries the id as a fourth).
      if ((d.type === "Transfer" || d.type === "Approval") && d.topics.length === 3) links.token = `${base}/token/${seg(d.contract_address)}`;
      break;
    }
    case "nft_transfers": {
      const d = record.data;
      links.contract = `${base}/account/${seg(d.contract.contract_address)}`;
      links.token = `${base}/nft/${seg(d.contract.contract_address)}/${seg(d.token_id)}`;
      account ??= d.to ?? d.from;
      break;
    }
    case "internal_transactions":
    case "transactions":
      account ??= record.data.from;
      break;
  }
  if (account) links.account = `${base}/account/${seg(account)}`;
  return links;
}

/** 0x1234…abcd; the full address is in the record and the links. */
export function shortAddress(address: string | undefined): string {
  if (address === undefined) return "(none)";
  return isAddress(address) ? `${address.slice(0, 6)}…${address.slice(-4)}` : truncate(oneLine(address), 20);
}

function direction(from: string | undefined, to: string | undefined, account: string | undefined): string | undefined {
  if (account === undefined) return undefined;
  const a = account.toLowerCase();
  const out = from?.toLowerCase() === a;
  const into = to?.toLowerCase() === a;
  return out && into ? "self" : out ? "out" : into ? "in" : undefined;
}

/**
 * "1,250.5 USDT (0x1234…abcd) out 0xwall…et01 → 0x40e4…531c". The symbol is on-chain
 * text: flattened and cut here, escaped by each sink, and always next to the address, since
 * anyone can deploy a token named "USDT".
 */
export function tokenTransferSummary(token: TokenInfo, transfer: TokenTransferValues, watchedAccount?: string): string {
  const symbol = tokenSymbolText(token.symbol);
  const dir = direction(transfer.from, transfer.to, watchedAccount);
  return `${formatTokenAmount(transfer.value, token.decimals, { group: true })} ${symbol} (${shortAddress(token.address)})${dir ? ` ${dir}` : ""}: ${shortAddress(transfer.from)} → ${shortAddress(transfer.to)}`;
}

/** One plain-text line per family; on-chain text is flattened and cut, never trusted. */
export function defaultSummary(record: WatchedRecord, watchedAccount?: string): string {
  switch (record.family) {
    case "transactions": {
      const d = record.data;
      const dir = direction(d.from, d.to, watchedAccount);
      const call = d.method !== undefined ? ` ${truncate(oneLine(d.method), 40)}()` : d.method_id !== undefined ? ` call ${d.method_id}` : "";
      let line = `${formatKei(BigInt(d.value_kei), { group: true })} KAIA${dir ? ` ${dir}` : ""}${call} ${shortAddress(d.from)} → ${d.to === undefined ? "(contract creation)" : shortAddress(d.to)}`;
      if (d.fee_payer !== undefined) line += `, fee paid by ${shortAddress(d.fee_payer)}`;
      if (d.status === "Fail") {
        const why = d.revert_reason ?? d.error;
        line += ` (Fail: ${why ? truncate(oneLine(why), 80) : "no message"})`;
      }
      return line;
    }
    case "internal_transactions": {
      const d = record.data;
      const kei = amountKeiOf(d.amount);
      const amount = kei === undefined ? truncate(oneLine(String(d.amount)), 40) : formatKei(kei, { group: true });
      let line = `${amount} KAIA ${truncate(oneLine(d.type), 16)} ${shortAddress(d.from)} → ${d.to === undefined ? "(no recipient)" : shortAddress(d.to)}`;
      const message = d.transaction_status?.fail_message || d.error;
      if (d.transaction_status?.status === "Fail") line += ` (Fail: ${message ? truncate(oneLine(message), 80) : "no message"})`;
      else if (d.error) line += ` (error: ${truncate(oneLine(d.error), 80)})`;
      return line;
    }
    case "nft_transfers": {
      const d = record.data;
      const count = d.token_count !== "1" ? `${truncate(oneLine(String(d.token_count)), 24)} × ` : "";
      const what = `${count}NFT #${truncate(oneLine(d.token_id), 24)} of ${shortAddress(d.contract.contract_address)}`;
      const dir = direction(d.from, d.to, watchedAccount);
      const suffix = dir ? ` (${dir})` : "";
      if (d.from.toLowerCase() === ZERO_ADDRESS) return `${what} minted to ${shortAddress(d.to)}${suffix}`;
      if (d.to === undefined || isBurnAddress(d.to)) return `${what} burned by ${shortAddress(d.from)}${suffix}`;
      return `${what} sent ${shortAddress(d.from)} → ${shortAddress(d.to)}${suffix}`;
    }
    case "event_logs": {
      const d = record.data;
      const named = d.type !== undefined && d.type !== "" && d.type !== "Unknown";
      const event = named ? truncate(oneLine(d.type as string), 40) : `event ${d.topics[0] ? `${d.topics[0].slice(0, 10)}…` : "(anonymous)"}`;
      const args = d.items
        .slice(0, 4)
        .map((item) => `${truncate(oneLine(item.name), 24)} ${isAddress(item.value) ? shortAddress(item.value) : truncate(oneLine(item.value), 32)}`)
        .join(", ");
      const estimated = d.estimated_event_log ? " (name estimated)" : "";
      return `${event}${estimated} on ${shortAddress(d.contract_address)}${args ? `: ${args}` : ""}`;
    }
  }
}

/** The value of one template variable (see summary-template.ts for the documented set). */
function templateValue(name: string, alert: AlertDocument, record: WatchedRecord, account: string | undefined, transfer?: TokenTransferValues): unknown {
  if (name.startsWith("link.")) return alert.links[name.slice(5) as keyof AlertDocument["links"]];
  if (name === "record" || name.startsWith("record.") || name.startsWith("record[")) return readPath(record.data, name.slice(6));
  switch (name) {
    case "id": case "rule": case "watch": case "network": case "source": case "block": case "transaction_hash": case "datetime": case "summary":
      return alert[name];
  }
  if (transfer !== undefined && alert.token !== undefined) {
    switch (name) {
      case "from": return transfer.from;
      case "to": return transfer.to;
      case "direction": return direction(transfer.from, transfer.to, account);
      case "amount": return alert.token.amount;
      case "token": return alert.token.address;
      case "token_symbol": return alert.token.symbol ?? undefined;
    }
  }
  switch (record.family) {
    case "event_logs": {
      const d = record.data;
      if (name.startsWith("args.")) return d.items.find((item) => item.name === name.slice(5))?.value;
      const topic = /^topics\[(\d)\]$/.exec(name);
      if (topic) return d.topics[Number(topic[1])];
      switch (name) {
        case "contract": return d.contract_address;
        case "event": return d.type;
        case "signature": return d.topics[0];
        case "log_index": return d.log_index;
        case "estimated": return d.estimated_event_log === true;
      }
      return undefined;
    }
    case "nft_transfers": {
      const d = record.data;
      switch (name) {
        case "contract": return d.contract.contract_address;
        case "contract_type": return d.contract.contract_type;
        case "token_id": case "from": case "to": case "token_count": return d[name];
        case "direction": return direction(d.from, d.to, account);
        case "mint": return d.from.toLowerCase() === ZERO_ADDRESS;
        case "burn": return d.to === undefined || isBurnAddress(d.to);
      }
      return undefined;
    }
    case "transactions": {
      const d = record.data;
      if (name.startsWith("args.")) return d.args?.find((a) => a.name === name.slice(5))?.value;
      switch (name) {
        case "amount_kaia": return d.value;
        case "amount_kei": return d.value_kei;
        case "direction": return direction(d.from, d.to, account);
        case "failed": return d.status === "Fail";
        case "fee_delegated": return d.fee_payer !== undefined;
        case "index": return d.transaction_index;
        case "from": case "to": case "status": case "error": case "revert_reason": case "method_id": case "method": case "type": case "type_int": case "fee_payer": case "fee": case "gas_used": case "gas_price":
          return d[name];
      }
      return undefined;
    }
    case "internal_transactions": {
      const d = record.data;
      const kei = amountKeiOf(d.amount);
      switch (name) {
        case "amount_kaia": return kei === undefined ? d.amount : formatKei(kei);
        case "amount_kei": return kei;
        case "status": return d.transaction_status?.status;
        case "fail_message": return d.transaction_status?.fail_message;
        case "failed": return Boolean(d.error) || d.transaction_status?.status === "Fail";
        case "type": case "from": case "to": case "error": case "method_id": case "signature": case "call_id": return d[name];
      }
      return undefined;
    }
  }
}
