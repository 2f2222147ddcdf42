import { readFileSync } from "node:fs";
import { withFieldTables } from "../../src/families/field-tables.js";
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/explorer/operations.js";
import type { EventLog, InternalTransactionListItem, NftTransfer } from "../../src/explorer/types.js";
import type { AnyFamily, FamilyField } from "../../src/families/define-family.js";
import { familyDefinitions, familyOf } from "../../src/families/registry.js";
import type { NodeTransaction } from "../../src/model/node-transaction.js";
import type { RecordFamily, WatchedRecord } from "../../src/model/record.js";
import { alertView } from "../../src/notify/alert-view.js";
import { recordFieldExists } from "../../src/notify/record-fields.js";
import { buildAlert } from "../../src/rules/build-alert.js";
import { compileCondition } from "../../src/rules/compile-condition.js";
import { evaluateCondition, readField } from "../../src/rules/evaluate-condition.js";
import { resolveField, type FieldSpec } from "../../src/rules/fields.js";
import { validateSummaryTemplate } from "../../src/rules/summary-template.js";
import { prepareWindow } from "../../src/watch/normalize.js";
import { FAMILY_OF_OPERATION } from "../../src/watch/source.js";
import { EXCHANGE, HOT_WALLET, TOKEN, TRANSFER_TOPIC, TX, topicOf } from "../rules/fixtures.js";

/**
 * The contract of a record family definition (src/families/define-family.ts), one run over
 * every definition in the registry: a record of each shape the family's sources answer
 * normalises and probes, keys and orders, renders (summary, links, alert view, explain), and
 * its fields read what the docs say and what the compiled conditions read. A new family
 * adds its shapes to SHAPES; the suite fails until it does.
 */
const TX2 = `0x${"ab".repeat(32)}`;

const eventLogShapes: EventLog[] = [
  {
    log_index: 4,
    contract_address: TOKEN,
    type: "Transfer",
    topics: [TRANSFER_TOPIC, topicOf(HOT_WALLET), topicOf(EXCHANGE)],
    data: "0x00000000000000000000000000000000000000000000003635c9adc5dea00000",
    items: [{ name: "from", value: HOT_WALLET }, { name: "to", value: EXCHANGE }, { name: "value", value: "1000000000000000000000" }],
    block_number: 160_000_123,
    transaction_hash: TX,
  },
  // Undecoded, anonymous-looking, its name guessed: the second shape the explorer answers.
  { log_index: 0, contract_address: TOKEN, type: "Unknown", topics: [`0x${"12".repeat(32)}`], data: "0x", items: [], block_number: 160_000_124, transaction_hash: TX2, estimated_event_log: true },
];

const nftShapes: NftTransfer[] = [
  { contract: { contract_address: TOKEN, contract_type: "KIP17" }, block_id: 160_000_200, transaction_hash: TX, transaction_index: 2, datetime: "2025-03-01T12:00:00.000Z", from: EXCHANGE, to: HOT_WALLET, token_id: "42", token_count: "1" },
  // A KIP-37 mint of many, no transaction index.
  { contract: { contract_address: TOKEN, contract_type: "KIP37" }, block_id: 160_000_201, transaction_hash: TX2, datetime: "2025-03-01T12:00:01.000Z", from: "0x0000000000000000000000000000000000000000", to: HOT_WALLET, token_id: "7", token_count: "25" },
];

const internalShapes: InternalTransactionListItem[] = [
  { call_id: 1, block_id: 160_000_300, transaction_hash: TX, transaction_index: 7, datetime: "2025-03-01T12:05:00.000Z", type: "CALL", from: HOT_WALLET, to: EXCHANGE, amount: "1500", method_id: "0xa9059cbb", signature: "transfer", transaction_status: { status: "Success" } },
  // A failed creation: no recipient, no hash (the block list's older shape), the amount a number.
  { call_id: 0, block_id: 160_000_301, transaction_index: 3, type: "CREATE", from: HOT_WALLET, amount: 0.5 as unknown as string, error: "out of gas", transaction_status: { status: "Fail", fail_message: "out of gas" } },
];

const transactionShapes: NodeTransaction[] = [
  {
    hash: TX, block_number: 160_000_400, block_hash: `0x${"bb".repeat(32)}`, transaction_index: 0, from: HOT_WALLET.toLowerCase(), to: EXCHANGE.toLowerCase(), value: "2", value_kei: "2000000000000000000",
    type: "TxTypeValueTransfer", type_int: 8, input_size: 0, status: "Success", gas_used: "21000", gas_price: "25000000000", fee: "0.000525", log_count: 0,
  },
  {
    hash: TX2, block_number: 160_000_401, block_hash: `0x${"bb".repeat(32)}`, transaction_index: 5, from: HOT_WALLET.toLowerCase(), to: TOKEN.toLowerCase(), value: "0", value_kei: "0",
    type: "TxTypeFeeDelegatedSmartContractExecution", type_int: 49, fee_payer: EXCHANGE.toLowerCase(), method_id: "0xa9059cbb", method: "transfer", method_signature: "transfer(address,uint256)",
    args: [{ name: "to", type: "address", value: EXCHANGE.toLowerCase() }, { name: "amount", type: "uint256", value: "42" }], input_size: 68, status: "Fail", tx_error: "0x9", error: "evm: execution reverted",
    revert_reason: "insufficient balance", gas_used: "60000", gas_price: "25000000000", fee: "0.0015", log_count: 0,
  },
];

/** The shapes of each family's records as its readers answer them. */
const SHAPES: Record<RecordFamily, readonly unknown[]> = {
  event_logs: eventLogShapes,
  nft_transfers: nftShapes,
  internal_transactions: internalShapes,
  transactions: transactionShapes,
};

const docs = readFileSync(new URL("../../docs/rules.md", import.meta.url), "utf8");

/** The field table under a family's heading in docs/rules.md: every `name` it shows. */
function documentedFields(family: string): Set<string> {
  const start = docs.indexOf(`**${family}**`);
  expect(start, `docs/rules.md has a table of ${family}'s fields`).toBeGreaterThan(-1);
  const table = docs.slice(start).split("\n\n")[1] ?? "";
  return new Set([...table.matchAll(/`([\w.[\]]+)`/g)].map((m) => (m[1] as string).replace(/^topics\[0\.\.3\]$/, "topics[i]")));
}

/** A field resolved for a rule that can name it: an account watch for direction, a token watch for the token fields. */
function spec(family: AnyFamily, name: string, token: boolean): FieldSpec {
  const written = name.replace("[i]", "[1]").replace("args.NAME", `args.${family.name === "transactions" ? "amount" : "value"}`);
  const resolved = resolveField(written, { family: family.name, watchedAccounts: new Set([HOT_WALLET.toLowerCase()]), ...(token ? { token: { info: undefined, otherSymbols: [] } } : {}) });
  if (!resolved.ok) throw new Error(resolved.message);
  return resolved.field;
}

/** A condition value equal to what the record holds, as a rule would write it (a KAIA amount with its unit). */
function written(value: unknown, field: FieldSpec): unknown {
  if (field.kind === "amount") return `${String(value)} KAIA`;
  return typeof value === "bigint" ? value.toString() : value;
}

describe("docs/rules.md's field tables", () => {
  it("are the registry's as npm run docs:fields renders them", () => {
    expect(withFieldTables(docs), "run npm run docs:fields").toBe(docs);
  });
});

describe.each(familyDefinitions().map((family) => [family.name, family] as const))("family %s", (name, family) => {
  const shapes = SHAPES[name];
  const normalize = family.normalize as (raw: unknown) => WatchedRecord;
  const probe = family.probe as (raw: unknown) => WatchedRecord;

  it("has shapes to test and its readers name real operations that yield it", () => {
    expect(shapes.length).toBeGreaterThan(0);
    for (const operation of family.readers.explorer) {
      expect(Object.hasOwn(OPERATIONS, operation), operation).toBe(true);
      expect(FAMILY_OF_OPERATION[operation]).toBe(name);
    }
    for (const operation of family.readers.node) expect(FAMILY_OF_OPERATION[operation]).toBe(name);
    if (family.readers.account !== undefined) expect(family.readers.explorer).toContain(family.readers.account);
  });

  it("normalises each shape to one stable, case-blind identity, and probes it without building one", () => {
    for (const raw of shapes) {
      const record = normalize(structuredClone(raw));
      expect(record.family).toBe(name);
      expect(record.key).not.toBe("");
      expect(record.key).toBe(record.key.toLowerCase());
      expect(normalize(structuredClone(raw)).key).toBe(record.key);
      expect(record.order.every((n) => Number.isInteger(n))).toBe(true);
      const probed = probe(structuredClone(raw));
      expect({ ...probed, key: record.key, order: record.order }).toEqual(record);
      // No identity, or one already there for nothing (a transaction's hash).
      expect(["", record.key]).toContain(probed.key);
    }
    const records = shapes.map((raw) => normalize(structuredClone(raw)));
    const keys = new Set(records.map((r) => r.key));
    expect(keys.size).toBe(records.length);
    // A record the API returned twice: dropped as page drift, or numbered as a twin.
    const again = prepareWindow([...records, normalize(structuredClone(shapes[0]))], 0, Number.MAX_SAFE_INTEGER);
    expect(again.records.length).toBe(family.twinsPossible ? records.length + 1 : records.length);
  });

  it("reads every field the docs list, the compiled condition agreeing with the reference", () => {
    const documented = documentedFields(name);
    const all: [string, FamilyField<never>, boolean][] = [
      ...Object.entries(family.fields).map(([field, def]) => [field, def, false] as [string, FamilyField<never>, boolean]),
      ...Object.entries(family.tokenTransferFields ?? {}).map(([field, def]) => [field, def, true] as [string, FamilyField<never>, boolean]),
    ];
    for (const [fieldName, def, token] of all) {
      if (!token) expect(documented, `docs/rules.md lists ${name}.${fieldName}`).toContain(fieldName);
      expect(def.doc.length, fieldName).toBeGreaterThan(0);
      expect(def.example.startsWith(fieldName.replace("[i]", "[").replace(".NAME", ".").split(/[[.]/)[0] as string), `${fieldName}'s example names it`).toBe(true);
      const field = spec(family, fieldName, token);
      const context = { family: name, watchedAccounts: new Set([HOT_WALLET.toLowerCase()]), ...(token ? { token: { info: undefined, otherSymbols: [] } } : {}) };
      for (const raw of shapes) {
        const record = normalize(structuredClone(raw));
        const value = readField(record, field, context.watchedAccounts);
        expect(value, `${fieldName} is read as the definition says`).toEqual((def.read as (r: WatchedRecord, f: FieldSpec, a: ReadonlySet<string>) => unknown)(record, field, context.watchedAccounts));
        const conditions: unknown[] = [{ [field.name]: { exists: true } }, { [field.name]: { exists: false } }];
        if (value !== undefined && value !== null && !token) conditions.push({ [field.name]: written(value, field) });
        for (const when of conditions) {
          const compiled = compileCondition(when, context);
          if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
          expect(compiled.test(record, context.watchedAccounts), `${JSON.stringify(when)} on ${record.key}`).toBe(evaluateCondition(when, record, context).passed);
        }
        if (value !== undefined && value !== null && !token) expect(compileCondition({ [field.name]: written(value, field) }, context).ok && evaluateCondition({ [field.name]: written(value, field) }, record, context).passed, `${fieldName} equals its own value`).toBe(true);
      }
    }
  });

  it("renders each shape: summary, links, datetime, template variables, alert view, explain line", () => {
    for (const raw of shapes) {
      const record = normalize(structuredClone(raw));
      const alert = buildAlert({ rule: { name: "r" }, watch: "w", record, network: "mainnet", explorerUrl: "https://kaiascan.io/", now: new Date(0), watchedAccount: HOT_WALLET });
      expect(alert.source).toBe(name);
      expect(alert.summary).not.toMatch(/[\r\n]/);
      expect(alert.summary.length).toBeGreaterThan(0);
      expect(alert.links.block).toBe(`https://kaiascan.io/block/${record.block}`);
      expect(alert.datetime).toBe(family.datetime(record as never));
      // The view is read from the stored document: the same from JSON as from the object.
      const stored = JSON.parse(JSON.stringify(alert));
      expect(alertView(stored)).toEqual(alertView(alert));
      expect(alertView(alert).fields.map((f) => f.label)).toContain("Block");
      expect(family.describe(record as never, String)).not.toMatch(/[\r\n]/);
      const variables = family.templateVariables.map((v) => v.replace("[i]", "[1]").replace("args.NAME", "args.to"));
      expect(validateSummaryTemplate(variables.map((v) => `{{${v}}}`).join(" "), name)).toEqual([]);
      const rendered = buildAlert({ rule: { name: "r", summary: variables.map((v) => `{{${v}}}`).join("|") }, watch: "w", record, network: "mainnet", explorerUrl: "https://kaiascan.io", now: new Date(0) });
      expect(rendered.summary.split("|").length).toBe(variables.length);
    }
  });

  it("documents its template variables in docs/rules.md", () => {
    const row = docs.split("\n").find((line) => line.startsWith(`| ${name} |`));
    expect(row, `docs/rules.md has a variables row for ${name}`).toBeDefined();
    expect(row).toBe(`| ${name} | \`${family.templateVariables.join(" ")}\` |`);
  });

  it("declares the shape of its stored record: every key of each shape is one", () => {
    for (const raw of shapes) {
      for (const key of Object.keys(raw as object)) expect(recordFieldExists(name, key), `${name}.${key}`).toBe(true);
    }
  });
});

it("the registry answers for every family it lists, and only for those", () => {
  expect(familyDefinitions().map((f) => f.name)).toEqual(["event_logs", "nft_transfers", "internal_transactions", "transactions"]);
  for (const family of familyDefinitions()) expect(familyOf(family.name)).toBe(family);
  expect(() => familyOf("blocks" as RecordFamily)).toThrow(/no record family "blocks"/);
});
