import { createHash } from "node:crypto";
import { formatTokenAmount } from "../chain/token-amounts.js";
import type { TokenInfo } from "../chain/token-info.js";
import { decodeTokenTransfer, type TokenTransferValues } from "../chain/token-transfer.js";
import type { WatchedRecord } from "../model/record.js";
import type { AlertDocument, AlertSeverity } from "../model/alert-document.js";
import { ALERT_DOCUMENT_VERSION } from "../model/alert-document.js";
import type { AnyFamily } from "../families/define-family.js";
import { familyOf } from "../families/registry.js";
import { directionOf, shortAddress } from "../families/shared-fields.js";
import { readPath, renderTemplate } from "./summary-template.js";
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
  const family = familyOf(record.family);
  const links = buildLinks(input, family);
  const base: Omit<AlertDocument, "summary"> = {
    version: ALERT_DOCUMENT_VERSION,
    id: alertId(input.rule.name, record.key),
    rule: input.rule.name,
    watch: input.watch,
    source: record.family,
    network: input.network,
    block: record.block,
    transaction_hash: record.transactionHash ?? null,
    datetime: family.datetime(record),
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

function buildLinks(input: BuildAlertInput, family: AnyFamily): AlertDocument["links"] {
  const base = input.explorerUrl.replace(/\/+$/, "");
  const { record } = input;
  const links: AlertDocument["links"] = { block: `${base}/block/${record.block}` };
  if (record.transactionHash) links.transaction = `${base}/tx/${encodeURIComponent(record.transactionHash)}`;
  const own = family.links(record, (path) => `${base}${path}`);
  if (own.contract !== undefined) links.contract = own.contract;
  if (own.token !== undefined) links.token = own.token;
  const account = input.watchedAccount ?? own.account;
  if (account) links.account = `${base}/account/${encodeURIComponent(account)}`;
  return links;
}

export { shortAddress };

/**
 * "1,250.5 USDT (0x1234…abcd) out 0xwall…et01 → 0x40e4…531c". The symbol is on-chain
 * text: flattened and cut here, escaped by each sink, and always next to the address, since
 * anyone can deploy a token named "USDT".
 */
export function tokenTransferSummary(token: TokenInfo, transfer: TokenTransferValues, watchedAccount?: string): string {
  const symbol = tokenSymbolText(token.symbol);
  const dir = directionOf(transfer.from, transfer.to, watchedAccount);
  return `${formatTokenAmount(transfer.value, token.decimals, { group: true })} ${symbol} (${shortAddress(token.address)})${dir ? ` ${dir}` : ""}: ${shortAddress(transfer.from)} → ${shortAddress(transfer.to)}`;
}

/** One plain-text line per family (its definition's summary); on-chain text is flattened and cut, never trusted. */
export function defaultSummary(record: WatchedRecord, watchedAccount?: string): string {
  return familyOf(record.family).summary(record, watchedAccount);
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
      case "direction": return directionOf(transfer.from, transfer.to, account);
      case "amount": return alert.token.amount;
      case "token": return alert.token.address;
      case "token_symbol": return alert.token.symbol ?? undefined;
    }
  }
  return familyOf(record.family).templateValue(name, record, account);
}
