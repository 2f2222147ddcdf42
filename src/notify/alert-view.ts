import type { AlertDocument, AlertStatus } from "../model/alert-document.js";
import { repeatOf } from "../model/alert-status.js";
import type { Delivery } from "./sink.js";
import { safeUrl } from "./escape.js";
import { cleanLine } from "../common/sanitize-text.js";
import { decodeTokenTransfer, type TokenTransferValues } from "../chain/token-transfer.js";
import { BALANCE_ALERT_SOURCE } from "../model/alert-document.js";
import type { AnyFamily } from "../families/define-family.js";
import { familyOf, isFamilyName } from "../families/registry.js";
import { storedField as get, storedText as text } from "../families/shared-fields.js";

/**
 * What every chat and email sink shows of an alert, as plain text that is already
 * sanitized (one line each, invisible and bidi characters handled) and cut to a sane size.
 * Sinks only have to escape it for their markup and fit it to their limits.
 */
export interface AlertView {
  rule: string;
  summary: string;
  fields: { label: string; value: string }[];
  links: { label: string; url: string }[];
  /** ISO-8601, when the record carries it. */
  datetime: string | undefined;
  /** The lifecycle state of an alert that has one; undefined for a one-shot alert. */
  status: AlertStatus | undefined;
  /** A reminder of a firing episode: its counter (1, 2 …); 0 for every other alert. */
  repeat: number;
}

/**
 * The title of a single alert in every chat and email sink: a one-shot alert reads as it always
 * did; an alert with a lifecycle says FIRING or RESOLVED first, so that the pair reads as one
 * incident opened and closed.
 */
export function alertTitle(view: Pick<AlertView, "rule" | "status"> & { repeat?: number }): string {
  switch (view.status) {
    case "firing":
      return `🔔 FIRING${reminderNote(view.repeat)}: ${view.rule}`;
    case "resolved":
      return `✅ RESOLVED: ${view.rule}`;
    case undefined:
      return `🔔 ${view.rule}`;
  }
}

/**
 * "FIRING: ", "FIRING (reminder 2): " or "RESOLVED: " before a line about an alert with a
 * lifecycle (digest lines, subjects); "" otherwise. A reminder says so, so that a person reads
 * it as the same incident still open, not a new one.
 */
export function statusPrefix(status: AlertStatus | undefined, repeat = 0): string {
  return status === undefined ? "" : `${status.toUpperCase()}${status === "firing" ? reminderNote(repeat) : ""}: `;
}

function reminderNote(repeat: number | undefined): string {
  return repeat !== undefined && repeat > 0 ? ` (reminder ${repeat})` : "";
}

/** On-chain free text (names, messages) is cut here; hashes and addresses fit easily. */
const TEXT_MAX = 200;
const SUMMARY_MAX = 300;
const MAX_ENRICHMENT = 6;

/** The family definition of a stored alert's source; undefined for a balance alert (and a source no definition has). */
function familyOfAlert(alert: AlertDocument): AnyFamily | undefined {
  return isFamilyName(alert.source) ? familyOf(alert.source) : undefined;
}

/** The contract a record is about, when it has one (NFT collection, event emitter). */
export function recordContract(alert: AlertDocument): string | undefined {
  return familyOfAlert(alert)?.contract?.of(alert.record);
}

export function alertView(alert: AlertDocument): AlertView {
  const fields: AlertView["fields"] = [];
  const add = (label: string, value: unknown, max = TEXT_MAX) => {
    const t = text(value);
    if (t !== undefined && t !== "") fields.push({ label, value: cleanLine(t, max) });
  };
  const r = alert.record;
  const family = familyOfAlert(alert);
  if (family?.tokenTransferFields !== undefined && alert.token !== undefined && transferOf(r) !== undefined) {
    // A token watch's Transfer: amount, from and to from the log's topics and data (what the
    // rules read), never the explorer's decoded items, which are guesses and may contradict them.
    const transfer = transferOf(r) as TokenTransferValues;
    const symbol = alert.token.symbol ?? "tokens";
    add("Amount", `${alert.token.amount} ${symbol}`, 100);
    add("Amount (base units)", transfer.value.toString(), 100);
    add("Token", symbol, 100);
    add("Token contract", alert.token.address);
    add("From", transfer.from);
    add("To", transfer.to);
  } else if (alert.source === BALANCE_ALERT_SOURCE) {
    const symbol = text(get(r, "symbol")) ?? "";
    add("Address", get(r, "address"));
    const balance = text(get(r, "balance"));
    if (balance !== undefined) add("Balance", `${balance} ${symbol}`.trim(), 100);
    add("Balance (base units)", get(r, "balance_base_units"), 100);
    const asset = text(get(r, "asset"));
    if (asset !== undefined && asset !== "KAIA") add("Token contract", asset);
    add("Condition", get(r, "condition"), 100);
  } else {
    family?.view(r, add);
  }
  const contract = recordContract(alert);
  for (const [key, value] of Object.entries(alert.enrichment ?? {}).slice(0, MAX_ENRICHMENT)) {
    add(cleanLine(key, 40), describeEnrichment(value, contract));
  }
  add("Block", alert.block);
  add("Transaction", alert.transaction_hash ?? undefined);

  const links: AlertView["links"] = [];
  const link = (label: string, url: string | undefined) => {
    const safe = safeUrl(url);
    if (safe !== undefined) links.push({ label, url: safe });
  };
  link("Transaction", alert.links.transaction);
  link("Block", alert.links.block);
  link("Account", alert.links.account);
  link("Contract", alert.links.contract);
  link("Token", alert.links.token);

  return {
    rule: cleanLine(alert.rule, 100),
    summary: cleanLine(alert.summary, SUMMARY_MAX),
    fields,
    links,
    datetime: alert.datetime ?? undefined,
    status: alertStatus(alert),
    repeat: repeatOf(alert),
  };
}

/** The Transfer in a token watch's event log record, from its topics and data; undefined if it is not one. */
function transferOf(record: unknown): TokenTransferValues | undefined {
  const topics = get(record, "topics");
  const data = get(record, "data");
  if (!Array.isArray(topics) || !topics.every((t) => typeof t === "string") || typeof data !== "string") return undefined;
  return decodeTokenTransfer({ topics: topics as string[], data });
}

/**
 * One enrichment value on one line. A token or NFT name is always shown with the contract
 * address beside it, because a stranger can name a token anything ("USDT", "Tether").
 */
export function describeEnrichment(value: unknown, recordContractAddress: string | undefined): string {
  const err = text(get(value, "error"));
  if (err !== undefined) return `lookup failed: ${err}`;
  for (const candidate of [value, get(value, "info"), get(value, "nft"), get(value, "contract")]) {
    const name = text(get(candidate, "name"));
    const symbol = text(get(candidate, "symbol"));
    const address = text(get(candidate, "contract_address")) ?? text(get(candidate, "address"));
    if ((name !== undefined || symbol !== undefined) && (address ?? recordContractAddress) !== undefined) {
      const label = [name, symbol === undefined ? undefined : `(${symbol})`].filter((x) => x !== undefined).join(" ");
      const tokenName = text(get(get(value, "metadata"), "name"));
      const nft = tokenName === undefined ? "" : ` — "${cleanLine(tokenName, 60)}"`;
      return `${cleanLine(label, 80)}${nft} — ${address ?? recordContractAddress}`;
    }
  }
  const json = typeof value === "string" ? value : JSON.stringify(value) ?? "";
  const line = cleanLine(json, 150);
  return recordContractAddress === undefined ? line : `${line} (contract ${recordContractAddress})`;
}

/** "500 NFT transfers for rule X of collection 0x…; first 20 shown". */
export function digestHeadline(delivery: Delivery, shown: number): string {
  const count = delivery.alerts.length;
  const sources = new Set(delivery.alerts.map((a) => a.source));
  const first = delivery.alerts[0];
  const nouns = sources.size === 1 && first !== undefined ? familyOfAlert(first)?.noun : undefined;
  const noun = nouns === undefined ? (count === 1 ? "alert" : "alerts") : count === 1 ? nouns[0] : nouns[1];
  const contracts = new Set(delivery.alerts.map((a) => recordContract(a)?.toLowerCase()));
  const [contract] = contracts;
  let about = "";
  if (contracts.size === 1 && contract !== undefined) about = ` of ${(first === undefined ? undefined : familyOfAlert(first)?.contract?.noun) ?? "contract"} ${contract}`;
  else if (first !== undefined && new Set(delivery.alerts.map((a) => a.watch)).size === 1) about = ` on watch ${cleanLine(first.watch, 60)}`;
  const tail = shown < count ? `; first ${shown} shown` : "";
  return `${count} ${noun} for rule ${cleanLine(delivery.rule, 100)}${about}${tail}`;
}

/** The status of a document read back from the store: only the two known values count. */
function alertStatus(alert: AlertDocument): AlertStatus | undefined {
  return alert.status === "firing" || alert.status === "resolved" ? alert.status : undefined;
}

/** One line of a digest: the alert's summary (after its status, when it has one) and its best link. */
export function digestLine(alert: AlertDocument): { text: string; url: string | undefined } {
  return {
    text: statusPrefix(alertStatus(alert), repeatOf(alert)) + cleanLine(alert.summary, TEXT_MAX),
    url: safeUrl(alert.links.transaction) ?? safeUrl(alert.links.block),
  };
}

export function isDigest(delivery: Delivery): boolean {
  return delivery.alerts.length !== 1;
}

/** A digest lists at most this many alerts in chat messages; the headline says how many were left out. */
export const DIGEST_SHOWN = 20;
