import fc from "fast-check";
import { toChecksumAddress } from "../../src/chain/address.js";
import type { NodeTransaction } from "../../src/chain/node-transactions.js";
import type { EventLog, InternalTransactionListItem, NftTransfer } from "../../src/explorer/types.js";
import type { ConditionContext } from "../../src/rules/parse-condition.js";
import type { RecordFamily, WatchedRecord } from "../../src/model/record.js";
import { COLLECTION, DEAD, EXCHANGE, HOT_WALLET, TOKEN, TRANSFER_TOPIC, APPROVAL_TOPIC, TX, ZERO, topicOf } from "./fixtures.js";

/**
 * Random conditions and records for property tests of the rules. Values come from small
 * pools so that equalities and bounds land on both sides often; records include absent
 * fields, odd letter case and unreadable amounts.
 */

const ADDRESSES = [HOT_WALLET, EXCHANGE, TOKEN, COLLECTION, ZERO, DEAD];
const recordAddress = fc.constantFrom(...ADDRESSES).chain((a) => fc.constantFrom(a, a.toLowerCase(), `0x${a.slice(2).toUpperCase()}`));
const ruleAddress = fc.constantFrom(...ADDRESSES).chain((a) => fc.constantFrom(a.toLowerCase(), toChecksumAddress(a), `0x${a.slice(2).toUpperCase()}`));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const block = fc.integer({ min: 99, max: 103 });
const txHash = fc.constantFrom(TX, TX.toUpperCase().replace("0X", "0x"), `0x${"ab".repeat(32)}`);
const smallInt = fc.constantFrom("0", "1", "2", "42", "1000000000000000000000", "999999999999999999999", "-5", "0x2a", "abc", "007");
const amountText = fc.oneof(
  fc.constantFrom("0", "0.5", "1", "1000", "1500", "1000.000000000000000001", "0.000000000000000001", "1e3", "abc"),
  fc.bigInt({ min: 0n, max: 10n ** 22n }).map((k) => `${k / 10n ** 18n}.${(k % 10n ** 18n).toString().padStart(18, "0")}`),
);

const eventLogRecord: fc.Arbitrary<WatchedRecord> = fc
  .record({
    block,
    tx: maybe(txHash),
    log_index: fc.integer({ min: 0, max: 5 }),
    contract_address: recordAddress,
    type: maybe(fc.constantFrom("Transfer", "Approval", "Unknown", "transfer")),
    topics: fc.array(fc.oneof(fc.constantFrom(TRANSFER_TOPIC, APPROVAL_TOPIC, TRANSFER_TOPIC.toUpperCase().replace("0X", "0x")), recordAddress.map(topicOf)), { maxLength: 4 }),
    items: fc.array(fc.record({ name: fc.constantFrom("from", "to", "value", "id"), value: fc.oneof(smallInt, recordAddress, fc.constantFrom("true", "Transfer", "")) }), { maxLength: 4 }),
    estimated_event_log: maybe(fc.boolean()),
  })
  .map((r) => {
    const data: EventLog = { log_index: r.log_index, contract_address: r.contract_address, topics: r.topics, data: "0x", items: r.items, block_number: r.block, transaction_hash: r.tx, type: r.type, estimated_event_log: r.estimated_event_log };
    return { family: "event_logs", block: r.block, transactionHash: r.tx, key: `${r.block}:${r.tx}:${r.log_index}`, order: [r.log_index], data };
  });

const nftRecord: fc.Arbitrary<WatchedRecord> = fc
  .record({
    block,
    tx: txHash,
    contract: recordAddress,
    contract_type: maybe(fc.constantFrom("KIP17", "KIP37", "ERC721", "kip17")),
    from: recordAddress,
    to: maybe(recordAddress),
    token_id: smallInt,
    token_count: smallInt,
  })
  .map((r) => {
    const data: NftTransfer = { contract: { contract_address: r.contract, contract_type: r.contract_type }, block_id: r.block, transaction_hash: r.tx, datetime: "2025-01-01T00:00:00.000Z", from: r.from, to: r.to, token_id: r.token_id, token_count: r.token_count };
    return { family: "nft_transfers", block: r.block, transactionHash: r.tx, key: `${r.block}:${r.tx}:${r.token_id}`, order: [0], data };
  });

const internalRecord: fc.Arbitrary<WatchedRecord> = fc
  .record({
    block,
    tx: maybe(txHash),
    call_id: fc.integer({ min: 0, max: 3 }),
    type: fc.constantFrom("CALL", "CREATE", "CREATE2", "call", "DELEGATECALL"),
    from: recordAddress,
    to: maybe(recordAddress),
    amount: fc.oneof(amountText, fc.constantFrom(1500, 0.5)) as fc.Arbitrary<string>,
    error: maybe(fc.constantFrom("out of gas", "", "execution reverted", "Out Of Gas\nline two")),
    method_id: maybe(fc.constantFrom("0xa9059cbb", "0xA9059CBB", "0x095ea7b3")),
    signature: maybe(fc.constantFrom("transfer", "approve", "withdrawAll")),
    status: maybe(fc.record({ status: fc.constantFrom("Success", "Fail", "fail"), fail_message: maybe(fc.constantFrom("out of gas", "Ownable: caller is not the owner")) })),
  })
  .map((r) => {
    const data: InternalTransactionListItem = { call_id: r.call_id, block_id: r.block, transaction_hash: r.tx, transaction_index: 0, type: r.type, from: r.from, to: r.to, amount: r.amount, error: r.error, method_id: r.method_id, signature: r.signature, transaction_status: r.status };
    return { family: "internal_transactions", block: r.block, transactionHash: r.tx, key: `${r.block}:${r.tx}:${r.call_id}`, order: [0, r.call_id], data };
  });

/** A top-level transaction as the node checker leaves it: lowercase addresses and hashes, exact decimals. */
const lowerAddress = recordAddress.map((a) => a.toLowerCase());
const KEI: Record<string, string> = { "1500": "1500000000000000000000", "0.5": "500000000000000000", "0.000000000000000001": "1", "0": "0" };
const nodeTransactionRecord: fc.Arbitrary<WatchedRecord> = fc
  .record({
    block,
    tx: txHash.map((h) => h.toLowerCase()),
    index: fc.integer({ min: 0, max: 3 }),
    from: lowerAddress,
    to: maybe(lowerAddress),
    value: fc.constantFrom("1500", "0.5", "0.000000000000000001", "0"),
    status: fc.constantFrom("Success" as const, "Fail" as const),
    error: maybe(fc.constantFrom("evm: execution reverted", "out of gas")),
    revert_reason: maybe(fc.constantFrom("insufficient balance", "Ownable: caller is not the owner")),
    method_id: maybe(fc.constantFrom("0xa9059cbb", "0x095ea7b3")),
    method: maybe(fc.constantFrom("transfer", "approve")),
    args: maybe(lowerAddress.map((to) => [{ name: "to", type: "address", value: to }, { name: "amount", type: "uint256", value: "42" }])),
    type: fc.constantFrom(["TxTypeLegacyTransaction", 0] as const, ["TxTypeFeeDelegatedValueTransfer", 9] as const, ["TxTypeEthereumDynamicFee", 0x7802] as const),
    fee_payer: maybe(lowerAddress),
    fee: fc.constantFrom("0.000525", "1.5"),
    gas_used: fc.constantFrom("21000", "60000"),
  })
  .map((r) => {
    const data: NodeTransaction = {
      hash: r.tx, block_number: r.block, block_hash: `0x${"bb".repeat(32)}`, transaction_index: r.index, from: r.from, to: r.to, value: r.value, value_kei: KEI[r.value] as string,
      type: r.type[0], type_int: r.type[1], fee_payer: r.fee_payer, method_id: r.method_id, method: r.method, args: r.args, input_size: 0, status: r.status, error: r.error,
      revert_reason: r.revert_reason, gas_used: r.gas_used, gas_price: "25000000000", fee: r.fee, log_count: 0,
    };
    for (const key of Object.keys(data) as (keyof NodeTransaction)[]) if (data[key] === undefined) delete data[key];
    return { family: "transactions", block: r.block, transactionHash: r.tx, key: r.tx, order: [r.index], data };
  });

type Values = { scalar: fc.Arbitrary<unknown>; noLists?: boolean; bound?: fc.Arbitrary<unknown>; text?: fc.Arbitrary<string> };
const integerValues: Values = { scalar: fc.constantFrom(0, 1, 42, "42", "1000000000000000000000", "10^21", 101, -5), bound: fc.constantFrom(0, 1, 41, 42, "10^21", 100, 102, "-6") };
const textValues = (pool: string[]): Values => ({ scalar: fc.constantFrom(...pool), text: fc.constantFrom(...pool, "gas", "Tr", "^Tr", "/OUT OF/i", "\\d+", "^$") });
const keyword = (pool: string[]): Values => ({ scalar: fc.constantFrom(...pool) });
const boolean: Values = { scalar: fc.boolean(), noLists: true };
const address: Values = { scalar: ruleAddress };
const hash = (pool: string[]): Values => ({ scalar: fc.constantFrom(...pool) });

const FIELDS: Record<RecordFamily, Record<string, Values>> = {
  event_logs: {
    contract: address,
    signature: hash(["Transfer(address,address,uint256)", APPROVAL_TOPIC, TRANSFER_TOPIC.toUpperCase().replace("0X", "0x")]),
    event: textValues(["Transfer", "Approval", "Unknown"]),
    "topics[0]": hash([TRANSFER_TOPIC, APPROVAL_TOPIC]),
    "topics[1]": { scalar: fc.oneof(ruleAddress, ruleAddress.map(topicOf)) },
    "topics[3]": { scalar: ruleAddress },
    "args.value": { scalar: fc.oneof(integerValues.scalar, fc.constantFrom("0x2A", "abc", true)), bound: fc.constantFrom("0 base_units", "41 base_units", "10^21 base_units", "1000 KAIA", "-6 base_units", "1 kei"), text: fc.constantFrom("1", "0x", "^-", "/ABC/i") },
    "args.from": { scalar: fc.oneof(ruleAddress, fc.constantFrom("true", "42")), text: fc.constantFrom("0x", "0x5aAe", "dead") },
    block: integerValues,
    transaction: hash([TX, `0x${"AB".repeat(32)}`]),
    log_index: integerValues,
    estimated: boolean,
  },
  nft_transfers: {
    contract: address,
    contract_type: keyword(["KIP17", "kip37", "ERC721"]),
    token_id: integerValues,
    from: address,
    to: address,
    token_count: integerValues,
    direction: keyword(["in", "out", "self"]),
    mint: boolean,
    burn: boolean,
    block: integerValues,
    transaction: hash([TX]),
  },
  internal_transactions: {
    type: keyword(["CALL", "create", "CREATE2"]),
    from: address,
    to: address,
    amount: { scalar: fc.constantFrom("1500 KAIA", "0.5 KAIA", "1 kei", "1000000000000000000001000 kei"), bound: fc.constantFrom("1000 KAIA", "1500 KAIA", "10^18 kei", "0 kei", "0.5 KAIA", "1000.000000000000000001 KAIA") },
    attempted_amount: { scalar: fc.constantFrom("1500 KAIA", "0.5 KAIA", "1 kei"), bound: fc.constantFrom("1000 KAIA", "0 kei", "0.5 KAIA") },
    status: keyword(["Success", "fail"]),
    failed: boolean,
    error: textValues(["out of gas", "execution reverted", ""]),
    fail_message: textValues(["out of gas"]),
    method_id: hash(["transfer(address,uint256)", "0x095EA7B3"]),
    signature: textValues(["transfer", "approve"]),
    call_id: integerValues,
    block: integerValues,
    transaction: hash([TX]),
  },
  transactions: {
    from: address,
    to: address,
    amount: { scalar: fc.constantFrom("1500 KAIA", "0.5 KAIA", "1 kei", "0 KAIA"), bound: fc.constantFrom("1000 KAIA", "1500 KAIA", "0 kei", "0.5 KAIA", "1 kei") },
    attempted_amount: { scalar: fc.constantFrom("1500 KAIA", "0 KAIA"), bound: fc.constantFrom("1000 KAIA", "0 kei") },
    direction: keyword(["in", "out", "self"]),
    status: keyword(["Success", "fail"]),
    failed: boolean,
    error: textValues(["evm: execution reverted", "out of gas"]),
    revert_reason: textValues(["insufficient balance"]),
    method_id: hash(["transfer(address,uint256)", "0x095EA7B3"]),
    method: textValues(["transfer", "approve"]),
    "args.amount": { scalar: fc.constantFrom(42, "42", "0x2a"), bound: fc.constantFrom("41 base_units", "42 base_units", "43 kei") },
    "args.to": { scalar: ruleAddress },
    type: keyword(["TxTypeLegacyTransaction", "txtypefeedelegatedvaluetransfer"]),
    type_int: integerValues,
    fee_payer: address,
    fee_delegated: boolean,
    fee: { scalar: fc.constantFrom("1.5 KAIA", "0.000525 KAIA"), bound: fc.constantFrom("1 KAIA", "0.000525 KAIA", "2 KAIA") },
    gas_used: integerValues,
    index: integerValues,
    block: integerValues,
    transaction: hash([TX]),
  },
};

function leaf(family: RecordFamily): fc.Arbitrary<Record<string, unknown>> {
  const tests = Object.entries(FIELDS[family]).map(([name, values]) => {
    const ops: fc.Arbitrary<unknown>[] = [
      values.scalar,
      values.scalar.map((v) => ({ eq: v })),
      values.scalar.map((v) => ({ ne: v })),
      fc.boolean().map((v) => ({ exists: v })),
    ];
    if (!values.noLists) {
      ops.push(fc.array(values.scalar, { minLength: 1, maxLength: 3 }).map((v) => ({ in: v })));
      ops.push(fc.array(values.scalar, { minLength: 1, maxLength: 3 }).map((v) => ({ not_in: v })));
    }
    if (values.bound) ops.push(fc.tuple(fc.constantFrom("gt", "gte", "lt", "lte"), values.bound).map(([op, v]) => ({ [op]: v })));
    if (values.text) {
      ops.push(fc.tuple(fc.constantFrom("contains", "starts_with"), values.text.filter((t) => t !== "" && !t.startsWith("/"))).map(([op, v]) => ({ [op]: v })));
      ops.push(values.text.filter((t) => t !== "").map((v) => ({ matches: v })));
    }
    return fc.oneof(...ops).map((value) => ({ [name]: value }));
  });
  return fc.oneof(...tests);
}

export function condition(family: RecordFamily): fc.Arbitrary<unknown> {
  const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
    tree: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf(family),
      fc.array(tie("tree"), { minLength: 1, maxLength: 3 }).map((all) => ({ all })),
      fc.array(tie("tree"), { minLength: 1, maxLength: 3 }).map((any) => ({ any })),
      tie("tree").map((not) => ({ not })),
      fc.tuple(leaf(family), leaf(family)).map(([a, b]) => ({ ...a, ...b })),
    ),
  }));
  return tree;
}

export const RECORDS: Record<RecordFamily, fc.Arbitrary<WatchedRecord>> = { event_logs: eventLogRecord, nft_transfers: nftRecord, internal_transactions: internalRecord, transactions: nodeTransactionRecord };

/** The context conditions are generated for (direction needs a watched account). */
export function contextOf(family: RecordFamily): ConditionContext {
  return family === "nft_transfers" || family === "transactions" ? { family, watchedAccounts: new Set([HOT_WALLET.toLowerCase()]) } : { family };
}
