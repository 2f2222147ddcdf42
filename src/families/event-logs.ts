import { isAddress } from "../chain/address.js";
import { decodeTokenTransfer } from "../chain/token-transfer.js";
import { cleanLine } from "../common/sanitize-text.js";
import type { EventLog } from "../explorer/types.js";
import { capRecord } from "./cap-record.js";
import { defineFamily, type FamilyField, type RecordOf, type RecordShape } from "./define-family.js";
import { integerOf, lower } from "./record-values.js";
import { BLOCK_FIELD, TRANSACTION_FIELD, caseBlindField, exactTextField, directionOfLower, shortAddress, storedField, storedText, summaryText } from "./shared-fields.js";

type EventLogRecord = RecordOf<"event_logs">;
type Field = FamilyField<EventLogRecord>;

const NO_ORDER: readonly number[] = Object.freeze([]);
const MAX_VIEW_ITEMS = 8;

/** Event logs emitted by a contract: operation 11 (accountEventLogs). */
export const eventLogs = defineFamily<"event_logs", EventLog>({
  name: "event_logs",
  noun: ["event", "events"],
  readers: { explorer: ["accountEventLogs"], node: ["nodeEventLogs"], account: "accountEventLogs", transaction: { list: "transactionEventLogs" } },
  watchedBy: { account: "tokens", kinds: ["contract"] },
  normalize(raw, bounded) {
    const data = bounded === true ? raw : capRecord(raw);
    const tx = lower(data.transaction_hash) ?? "";
    return { family: "event_logs", block: data.block_number, transactionHash: data.transaction_hash, key: `${data.block_number}:${tx}:${data.log_index}`, order: [data.log_index], data };
  },
  probe(raw, bounded) {
    const data = bounded === true ? raw : capRecord(raw);
    return { family: "event_logs", block: data.block_number, transactionHash: data.transaction_hash, key: "", order: NO_ORDER, data };
  },
  // The log index tells every log of a block apart: a repeat is page drift.
  twinsPossible: false,
  fields: {
    contract: caseBlindField({ kind: "address", doc: "the contract that emitted the log", example: 'contract: "0x…"' }, (r) => r.data.contract_address),
    signature: caseBlindField({ kind: "hash", operand: "event_topic", doc: "topic0; write the event signature (hashed with keccak-256) or the 0x hash", example: 'signature: "Transfer(address,address,uint256)"' }, (r) => r.data.topics[0]),
    event: exactTextField({ kind: "text", doc: "the decoded event name (\"Unknown\" when the explorer could not decode it)", example: "event: Transfer" }, (r) => r.data.type),
    "topics[i]": {
      kind: "hash",
      operand: "topic",
      doc: "topic i (0–3); an address value is compared in its 32-byte topic form",
      example: 'topics[1]: "0x…sender address or 32-byte topic"',
      read: (r, field) => r.data.topics[field.index ?? 0],
    },
    "args.NAME": {
      kind: "arg",
      doc: "a decoded argument by name; integers compare as numbers (base units), 0x-hex case-insensitively",
      example: 'args.value: { gt: "1000 * 10^18 base_units" }',
      read: (r, field) => r.data.items.find((item) => item.name === field.arg)?.value,
    },
    block: BLOCK_FIELD,
    transaction: TRANSACTION_FIELD,
    log_index: {
      kind: "integer",
      doc: "position of the log in its block",
      example: "log_index: 0",
      read: (r) => r.data.log_index,
      prepare: (r) => integerOf(r.data.log_index),
    },
    estimated: {
      kind: "boolean",
      doc: "the event name was guessed from a signature database",
      example: "estimated: false",
      read: (r) => r.data.estimated_event_log === true,
      prepare: (r) => r.data.estimated_event_log === true,
    },
  },
  /*
   * A token watch's rule reads the Transfer log as a transfer of the token the rule is compiled
   * for, from its topics and data, never from the explorer's decoded items. On other logs
   * these are undefined.
   */
  tokenTransferFields: {
    from: tokenField({ kind: "address", doc: "token watches: the sender of the Transfer", example: 'from: "0x…"' }, (r) => decodeTokenTransfer(r.data)?.from),
    to: tokenField({ kind: "address", doc: "token watches: the recipient of the Transfer", example: 'to: { not_in: ["0x…"] }' }, (r) => decodeTokenTransfer(r.data)?.to),
    direction: {
      kind: "keyword",
      values: ["in", "out", "self"],
      needsAccount: "it says whether the transfer came in or went out of that account",
      doc: "token watches: in (to the watched account; of an accounts watch, to a listed one), out (from it), self (both)",
      example: "direction: out",
      read: (r, _field, accounts) => {
        const transfer = decodeTokenTransfer(r.data);
        return transfer === undefined ? undefined : directionOfLower(transfer.from, transfer.to, accounts);
      },
    },
    token: {
      kind: "address",
      operand: "token",
      doc: "token watches: the token moved, by its address or by the symbol of one of the watch's tokens (letter case included)",
      example: "token: USDT",
      // The token a Transfer moves is the log's contract.
      read: (r) => r.data.contract_address,
      prepare: (r) => lower(r.data.contract_address),
      raw: (r) => r.data.contract_address,
    },
    amount: tokenField(
      { kind: "amount", doc: 'token watches: the value moved, exact, with a unit: "tokens" (whole tokens of the token) or its symbol, letter case included', example: 'amount: { gte: "50000 USDT" }' },
      (r) => decodeTokenTransfer(r.data)?.value,
    ),
  },
  topics: (r) => r.data.topics,
  args: (r) => r.data.items,
  datetime: () => null,
  links(r, under) {
    const d = r.data;
    const contract = encodeURIComponent(d.contract_address);
    // Three topics is the fungible-token shape (an ERC721 Transfer carries the id as a fourth).
    const fungible = (d.type === "Transfer" || d.type === "Approval") && d.topics.length === 3;
    return { contract: under(`/account/${contract}`), ...(fungible ? { token: under(`/token/${contract}`) } : {}) };
  },
  summary(r) {
    const d = r.data;
    const named = d.type !== undefined && d.type !== "" && d.type !== "Unknown";
    const event = named ? summaryText(d.type as string, 40) : `event ${d.topics[0] ? `${d.topics[0].slice(0, 10)}…` : "(anonymous)"}`;
    const args = d.items
      .slice(0, 4)
      .map((item) => `${summaryText(item.name, 24)} ${isAddress(item.value) ? shortAddress(item.value) : summaryText(item.value, 32)}`)
      .join(", ");
    const estimated = d.estimated_event_log ? " (name estimated)" : "";
    return `${event}${estimated} on ${shortAddress(d.contract_address)}${args ? `: ${args}` : ""}`;
  },
  templateVariables: ["contract", "event", "signature", "log_index", "estimated", "topics[i]", "args.NAME"],
  templateValue(name, r) {
    const d = r.data;
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
  },
  view(r, add) {
    add("Contract", storedField(r, "contract_address"));
    const type = storedText(storedField(r, "type"));
    if (type !== undefined) add("Event", storedField(r, "estimated_event_log") === true ? `${type} (estimated)` : type, 100);
    const items = storedField(r, "items");
    if (Array.isArray(items)) {
      for (const item of items.slice(0, MAX_VIEW_ITEMS)) add(cleanLine(storedText(storedField(item, "name")) ?? "?", 40), storedField(item, "value"));
    }
  },
  contract: { of: (r) => storedText(storedField(r, "contract_address")), noun: "contract" },
  describe: (r, c) => `log ${r.data.log_index} · ${c(r.data.contract_address)} · ${c(r.data.type ?? "Unknown")}`,
  recordShape: {
    log_index: "value",
    contract_address: "value",
    type: "value",
    topics: { list: "value" },
    data: "value",
    items: { list: { name: "value", value: "value" } },
    block_number: "value",
    transaction_hash: "value",
    estimated_event_log: "value",
  } satisfies Record<keyof EventLog, RecordShape>,
});

/** A token transfer field read from the decoded Transfer (already lowercase, or a bigint of base units). */
function tokenField(template: Pick<Field, "kind" | "doc" | "example">, read: (r: EventLogRecord) => string | bigint | undefined): Field {
  return { ...template, read, prepare: read };
}
