import type { RecordFamily } from "../model/record.js";
import type { TokenInfo } from "../chain/token-info.js";

/**
 * How a field's values compare:
 * - address: 0x + 40 hex, case-insensitive;
 * - hash: 0x-hex (transaction hash, topic, selector), case-insensitive;
 * - keyword: a short word from a known set (CALL, Fail, KIP17, in), case-insensitive;
 * - text: free text written on chain (error messages, names), case-sensitive;
 * - integer: whole numbers of any size (bigint);
 * - amount: native KAIA amounts, compared as bigint kei;
 * - boolean: true / false;
 * - arg: a decoded event argument (text): compared as integers when both sides are
 *   integers, case-insensitively when both are 0x-hex, else as exact text.
 */
export type FieldKind = "address" | "hash" | "keyword" | "text" | "integer" | "amount" | "boolean" | "arg";

export const OPERATORS = ["eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "contains", "starts_with", "matches", "exists"] as const;
export type Operator = (typeof OPERATORS)[number];

const EQUALITY = ["eq", "ne", "in", "not_in", "exists"] as const;
const ORDER = ["gt", "gte", "lt", "lte"] as const;
const TEXT = ["contains", "starts_with", "matches"] as const;

export const OPERATORS_BY_KIND: Readonly<Record<FieldKind, readonly Operator[]>> = {
  address: EQUALITY,
  hash: EQUALITY,
  keyword: EQUALITY,
  text: [...EQUALITY, ...TEXT],
  integer: [...EQUALITY, ...ORDER],
  amount: [...EQUALITY, ...ORDER],
  boolean: ["eq", "ne", "exists"],
  arg: [...EQUALITY, ...ORDER, ...TEXT],
};

/** What a field is, after its name was resolved against a rule's source. */
export interface FieldSpec {
  /** As written in the rule: "amount", "topics[1]", "args.value". */
  name: string;
  /** The field without its index or argument name: "topics", "args". */
  id: string;
  kind: FieldKind;
  /** topics[i]: the index. */
  index?: number;
  /** args.NAME: the argument name. */
  arg?: string;
  /** Closed keyword fields: the lowercase values that exist. */
  values?: readonly string[];
  /** How a written value turns into what the field holds, beyond the kind's rule. */
  operand?: "event_topic" | "topic" | "selector" | "transaction" | "token";
  /** direction: the lowercase watched account it is relative to. */
  account?: string;
  /**
   * The token fields of a token watch (`amount` of a Transfer log): the token this rule is
   * compiled for, undefined while the config is checked without JSON-RPC (any unit is then
   * accepted and checked at start-up), and the symbols of the watch's other tokens.
   */
  token?: TokenFieldContext;
}

/** What a token watch's rule knows of its tokens when it is compiled for one of them. */
export interface TokenFieldContext {
  info: TokenInfo | undefined;
  /** Symbols of the watch's other tokens: an amount in one of them never matches this token. */
  otherSymbols: readonly string[];
}

type FieldTemplate = Omit<FieldSpec, "name" | "id" | "index" | "arg" | "account" | "token"> & { doc: string; example: string };

const BLOCK: FieldTemplate = { kind: "integer", doc: "block number", example: "block: { gte: 150000000 }" };
const TRANSACTION: FieldTemplate = { kind: "hash", operand: "transaction", doc: "transaction hash", example: 'transaction: "0x…64 hex"' };

/** Every field a condition may name, per record family, with a line of documentation. */
export const FIELDS: Readonly<Record<RecordFamily, Readonly<Record<string, FieldTemplate>>>> = {
  event_logs: {
    contract: { kind: "address", doc: "the contract that emitted the log", example: 'contract: "0x…"' },
    signature: {
      kind: "hash",
      operand: "event_topic",
      doc: "topic0; write the event signature (hashed with keccak-256) or the 0x hash",
      example: 'signature: "Transfer(address,address,uint256)"',
    },
    event: { kind: "text", doc: "the decoded event name (\"Unknown\" when the explorer could not decode it)", example: "event: Transfer" },
    "topics[i]": {
      kind: "hash",
      operand: "topic",
      doc: "topic i (0–3); an address value is compared in its 32-byte topic form",
      example: 'topics[1]: "0x…sender address or 32-byte topic"',
    },
    "args.NAME": {
      kind: "arg",
      doc: "a decoded argument by name; integers compare as numbers (base units), 0x-hex case-insensitively",
      example: 'args.value: { gt: "1000 * 10^18" }',
    },
    block: BLOCK,
    transaction: TRANSACTION,
    log_index: { kind: "integer", doc: "position of the log in its block", example: "log_index: 0" },
    estimated: { kind: "boolean", doc: "the event name was guessed from a signature database", example: "estimated: false" },
  },
  nft_transfers: {
    contract: { kind: "address", doc: "the NFT contract", example: 'contract: "0x…"' },
    contract_type: { kind: "keyword", doc: "KIP17, KIP37, ERC721, ERC1155, …", example: "contract_type: KIP37" },
    token_id: { kind: "integer", doc: "the token id (any size)", example: 'token_id: { in: [1, 2, "115792089237316195423570985008687907853269984665640564039457584007913129639935"] }' },
    from: { kind: "address", doc: "sender", example: 'from: "0x…"' },
    to: { kind: "address", doc: "recipient", example: 'to: { not_in: ["0x…", "0x…"] }' },
    token_count: { kind: "integer", doc: "number of tokens moved (KIP37/ERC1155 amounts)", example: "token_count: { gte: 10 }" },
    direction: {
      kind: "keyword",
      values: ["in", "out", "self"],
      doc: "relative to the watched account: in (to it), out (from it), self (both); account watches only",
      example: "direction: in",
    },
    mint: { kind: "boolean", doc: "sent from the zero address", example: "mint: true" },
    burn: { kind: "boolean", doc: "sent to the zero address, 0x…dEaD or 0xdEaD…42069 (or to no one)", example: "burn: true" },
    block: BLOCK,
    transaction: TRANSACTION,
  },
  internal_transactions: {
    type: { kind: "keyword", doc: "CALL, CREATE, CREATE2, DELEGATECALL, STATICCALL, CALLCODE, SELFDESTRUCT, …", example: "type: { in: [CREATE, CREATE2] }" },
    from: { kind: "address", doc: "caller", example: 'from: "0x…"' },
    to: { kind: "address", doc: "callee (absent for some creations)", example: "to: { exists: false }" },
    amount: { kind: "amount", doc: "native value moved, with a unit (KAIA when none)", example: 'amount: { gte: "1000 KAIA" }' },
    status: { kind: "keyword", values: ["success", "fail"], doc: "status of the enclosing transaction: Success or Fail", example: "status: Fail" },
    failed: { kind: "boolean", doc: "the call has an error or its transaction failed", example: "failed: true" },
    error: { kind: "text", doc: "the call's error text", example: 'error: { contains: "out of gas" }' },
    fail_message: { kind: "text", doc: "the failed transaction's message", example: 'fail_message: { matches: "/insufficient/i" }' },
    method_id: {
      kind: "hash",
      operand: "selector",
      doc: "the 4-byte function selector; write the function signature or 0x + 8 hex",
      example: 'method_id: "transfer(address,uint256)"',
    },
    signature: { kind: "text", doc: "the decoded function name as the explorer shows it", example: 'signature: { starts_with: "withdraw" }' },
    call_id: { kind: "integer", doc: "position of the call in its transaction's call tree", example: "call_id: 0" },
    block: BLOCK,
    transaction: TRANSACTION,
  },
  transactions: {
    from: { kind: "address", doc: "the sender (the signer; not the fee payer)", example: 'from: "0x…"' },
    to: { kind: "address", doc: "the recipient or called contract (absent for a contract creation)", example: 'to: { not_in: ["0x…"] }' },
    amount: { kind: "amount", doc: "KAIA sent with the transaction, exact, with a unit (KAIA when none)", example: 'amount: { gte: "1000 KAIA" }' },
    direction: {
      kind: "keyword",
      values: ["in", "out", "self"],
      doc: "relative to the watched account: in (to it), out (from it), self (both); absent when the account only paid the fee",
      example: "direction: out",
    },
    status: { kind: "keyword", values: ["success", "fail"], doc: "the receipt's status: Success or Fail", example: "status: Fail" },
    failed: { kind: "boolean", doc: "the transaction failed", example: "failed: true" },
    error: { kind: "text", doc: "the node's text for a failed transaction's error code (txError), e.g. \"evm: execution reverted\"", example: 'error: { contains: "out of gas" }' },
    revert_reason: { kind: "text", doc: "the revert message, when the node's tracer gave one (debug_traceTransaction)", example: 'revert_reason: { contains: "insufficient" }' },
    method_id: {
      kind: "hash",
      operand: "selector",
      doc: "the 4-byte function selector of the input; write the function signature or 0x + 8 hex",
      example: 'method_id: "withdraw(uint256)"',
    },
    method: { kind: "text", doc: "the function name, for a selector the watch's `methods` name", example: "method: withdraw" },
    "args.NAME": {
      kind: "arg",
      doc: "an argument decoded with the watch's `methods` (names from the signature, else arg0, arg1, …); integers compare as numbers",
      example: 'args.amount: { gt: "1000 * 10^18" }',
    },
    type: { kind: "keyword", doc: "Kaia's transaction type: TxTypeValueTransfer, TxTypeFeeDelegatedSmartContractExecution, TxTypeEthereumDynamicFee, …", example: "type: TxTypeLegacyTransaction" },
    type_int: { kind: "integer", doc: "the type's number (typeInt): 0 legacy, 8 value transfer, 9 its fee-delegated form, 48 contract execution, …", example: "type_int: { in: [9, 10] }" },
    fee_payer: { kind: "address", doc: "the fee payer of a fee-delegated transaction", example: 'fee_payer: "0x…"' },
    fee_delegated: { kind: "boolean", doc: "a fee payer paid (part of) the fee", example: "fee_delegated: true" },
    fee: { kind: "amount", doc: "gas used × effective gas price, in KAIA (paid by the fee payer when there is one)", example: 'fee: { gt: "1 KAIA" }' },
    gas_used: { kind: "integer", doc: "gas used", example: "gas_used: { gt: 1000000 }" },
    index: { kind: "integer", doc: "position of the transaction in its block", example: "index: 0" },
    block: BLOCK,
    transaction: TRANSACTION,
  },
};

/**
 * The fields a token watch's rule has on top of event_logs: the Transfer log read as a
 * transfer of the token the rule is compiled for (from its topics and data, never from the
 * explorer's decoded items). Only with a token context: on other logs they mean nothing.
 */
export const TOKEN_TRANSFER_FIELDS: Readonly<Record<string, FieldTemplate>> = {
  from: { kind: "address", doc: "token watches: the sender of the Transfer", example: 'from: "0x…"' },
  to: { kind: "address", doc: "token watches: the recipient of the Transfer", example: 'to: { not_in: ["0x…"] }' },
  direction: {
    kind: "keyword",
    values: ["in", "out", "self"],
    doc: "token watches: in (to the watched account), out (from it), self (both)",
    example: "direction: out",
  },
  token: {
    kind: "address",
    operand: "token",
    doc: "token watches: the token moved, by its address or by the symbol of one of the watch's tokens (letter case included)",
    example: "token: USDT",
  },
  amount: {
    kind: "amount",
    doc: 'token watches: the value moved, exact, with a unit: "tokens" (whole tokens of the token) or its symbol, letter case included',
    example: 'amount: { gte: "50000 USDT" }',
  },
};

export type FieldResolution = { ok: true; field: FieldSpec } | { ok: false; message: string };

const TOPIC_FIELD = /^topics\[(\d+)\]$/;
const ARG_FIELD = /^args\.(.+)$/s;

/** Resolves a field name written in a condition against the rule's source. */
export function resolveField(name: string, context: { family: RecordFamily; watchedAccount?: string; token?: TokenFieldContext }): FieldResolution {
  const tokenFields = context.token !== undefined && context.family === "event_logs";
  const fields = tokenFields ? { ...FIELDS.event_logs, ...TOKEN_TRANSFER_FIELDS } : FIELDS[context.family];
  const known = () => Object.keys(fields).join(", ");
  const topic = TOPIC_FIELD.exec(name);
  const arg = ARG_FIELD.exec(name);
  const id = topic ? "topics[i]" : arg ? "args.NAME" : name;
  const template = Object.hasOwn(fields, id) ? fields[id] : undefined;
  if (!template || name === "topics[i]" || name === "args.NAME") {
    const elsewhere = (Object.keys(FIELDS) as RecordFamily[]).filter((f) => f !== context.family && Object.hasOwn(FIELDS[f], id));
    const token = context.family === "event_logs" && !tokenFields && Object.hasOwn(TOKEN_TRANSFER_FIELDS, id) ? " and of the token transfers of an account watch with `tokens:`" : "";
    const hint = elsewhere.length ? ` (it is a field of ${elsewhere.join(" and ")}${token})` : token ? ` (it is a field${token.slice(4)})` : "";
    return { ok: false, message: `unknown field "${name}" for ${context.family} records${hint}; fields: ${known()}` };
  }
  // Every key written out, in one order: objects made by spreading take a hidden class of
  // their own in V8, and a rule keeps its fields for the life of the daemon (10,000 rules,
  // 10,000 hidden classes).
  const field: FieldSpec = {
    name,
    id: id.replace(/\[i\]$|\.NAME$/, ""),
    kind: template.kind,
    index: undefined,
    arg: undefined,
    values: template.values,
    operand: template.operand,
    account: undefined,
    token: tokenFields && Object.hasOwn(TOKEN_TRANSFER_FIELDS, id) ? context.token : undefined,
  };
  if (topic) {
    const index = Number(topic[1]);
    if (index > 3) return { ok: false, message: `"${name}": a log has at most 4 topics, topics[0] to topics[3]` };
    field.index = index;
  }
  if (arg) field.arg = arg[1] as string;
  if (name === "direction" && context.family === "transactions" && context.watchedAccount === undefined) {
    return { ok: false, message: `"direction" needs a watch of an account (it says whether the transaction came in or went out of that account)` };
  }
  if (name === "direction") {
    if (context.watchedAccount === undefined) {
      return { ok: false, message: `"direction" needs a watch of an account (it says whether the transfer came in or went out of that account)` };
    }
    field.account = context.watchedAccount.toLowerCase();
  }
  return { ok: true, field };
}
