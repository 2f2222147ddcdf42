import { afterAll, beforeAll, expect, it } from "vitest";
import { defineFamily, type RecordShape } from "../../src/families/define-family.js";
import { lower } from "../../src/families/record-values.js";
import { BLOCK_FIELD, TRANSACTION_FIELD, shortAddress, storedField } from "../../src/families/shared-fields.js";
import { registerFamily } from "../../src/families/registry.js";
import type { RecordFamily, WatchedRecord } from "../../src/model/record.js";
import { alertView, digestHeadline } from "../../src/notify/alert-view.js";
import { recordFieldExists } from "../../src/notify/record-fields.js";
import { buildAlert } from "../../src/rules/build-alert.js";
import { compileCondition } from "../../src/rules/compile-condition.js";
import { evaluateCondition } from "../../src/rules/evaluate-condition.js";
import { resolveField } from "../../src/rules/fields.js";
import { validateSummaryTemplate } from "../../src/rules/summary-template.js";
import { prepareWindow } from "../../src/watch/normalize.js";
import { EXCHANGE, HOT_WALLET, TX } from "../rules/fixtures.js";

/**
 * What a new record family costs: its definition and one registry line (here registerFamily,
 * as only this test knows it), plus its operations, which a test family has none of. Nothing
 * in rules, notify or watch is touched, and yet its records are normalised, deduplicated,
 * tested by compiled rules and the reference evaluator, turned into alerts and rendered.
 */
interface Ping {
  block: number;
  hash: string;
  index: number;
  sender: string;
  note?: string;
}

// A name outside RecordFamily: the type lists the families the code ships with.
const PINGS = "pings" as RecordFamily;
type PingRecord = WatchedRecord & { data: Ping };

const pings = defineFamily<RecordFamily, Ping>({
  name: PINGS,
  noun: ["ping", "pings"],
  readers: { explorer: [], node: [], account: undefined, transaction: undefined },
  watchedBy: { account: undefined, kinds: [] },
  normalize: (data) => ({ family: PINGS, block: data.block, transactionHash: data.hash, key: `${data.block}:${data.hash.toLowerCase()}:${data.index}`, order: [data.index], data }) as unknown as PingRecord,
  probe: (data) => ({ family: PINGS, block: data.block, transactionHash: data.hash, key: "", order: [], data }) as unknown as PingRecord,
  twinsPossible: false,
  fields: {
    sender: {
      kind: "address",
      doc: "who pinged",
      example: 'sender: "0x…"',
      read: (r) => (r as PingRecord).data.sender,
      prepare: (r) => lower((r as PingRecord).data.sender),
      raw: (r) => (r as PingRecord).data.sender,
    },
    note: { kind: "text", doc: "what they said", example: "note: hello", read: (r) => (r as PingRecord).data.note, prepare: (r) => (r as PingRecord).data.note, raw: (r) => (r as PingRecord).data.note },
    block: BLOCK_FIELD,
    transaction: TRANSACTION_FIELD,
  },
  datetime: () => null,
  links: (r) => ({ account: (r as PingRecord).data.sender }),
  summary: (r) => `ping from ${shortAddress((r as PingRecord).data.sender)}`,
  templateVariables: ["sender", "note"],
  templateValue: (name, r) => (name === "sender" || name === "note" ? (r as PingRecord).data[name] : undefined),
  view: (r, add) => {
    add("Sender", storedField(r, "sender"));
    add("Note", storedField(r, "note"));
  },
  describe: (r, c) => `ping ${c((r as PingRecord).data.index)} · ${c((r as PingRecord).data.sender)}`,
  recordShape: { block: "value", hash: "value", index: "value", sender: "value", note: "value" } satisfies Record<keyof Ping, RecordShape>,
});

let unregister: () => void;
beforeAll(() => {
  unregister = registerFamily(pings);
});
afterAll(() => unregister());

const ping = (index: number, sender: string, note?: string): WatchedRecord =>
  pings.normalize({ block: 100, hash: TX, index, sender, ...(note === undefined ? {} : { note }) } as never);

it("a family defined and registered in a test runs through rules, alerts and views untouched", () => {
  // Normalised and deduplicated as any family.
  const window = prepareWindow([ping(2, EXCHANGE), ping(1, HOT_WALLET, "hi"), ping(1, HOT_WALLET, "hi")], 100, 100);
  expect(window.records.map((r) => r.key)).toEqual([`100:${TX}:1`, `100:${TX}:2`]);
  expect(window.duplicates).toBe(1);

  // Its fields resolve, compile (the prepared record reads its slots) and agree with the reference.
  expect(resolveField("sender", { family: PINGS })).toMatchObject({ ok: true, field: { kind: "address", slot: 0 } });
  expect(resolveField("amount", { family: PINGS })).toEqual({ ok: false, message: expect.stringContaining('unknown field "amount" for pings records') });
  const when = { all: [{ sender: HOT_WALLET.toLowerCase() }, { note: { contains: "h" } }] };
  const compiled = compileCondition(when, { family: PINGS });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
  expect(window.records.map((r) => compiled.test(r))).toEqual([true, false]);
  expect(window.records.map((r) => evaluateCondition(when, r, { family: PINGS }).passed)).toEqual([true, false]);

  // An alert, its summary and template, its view, its digest headline, its stored fields.
  const [first] = window.records as [WatchedRecord];
  expect(validateSummaryTemplate("{{note}} from {{sender}}", PINGS)).toEqual([]);
  expect(validateSummaryTemplate("{{amount_kaia}}", PINGS)[0]?.message).toContain('unknown variable "{{amount_kaia}}" for pings');
  const alert = buildAlert({ rule: { name: "pinged" }, watch: "w", record: first, network: "mainnet", explorerUrl: "https://kaiascan.io", now: new Date(0) });
  expect(alert.summary).toBe("ping from 0x5aAe…eAed");
  expect(alert.links.account).toBe(`https://kaiascan.io/account/${HOT_WALLET}`);
  const templated = buildAlert({ rule: { name: "pinged", summary: "{{note}} from {{sender}}" }, watch: "w", record: first, network: "mainnet", explorerUrl: "https://kaiascan.io", now: new Date(0) });
  expect(templated.summary).toBe(`hi from ${HOT_WALLET}`);
  expect(alertView(JSON.parse(JSON.stringify(alert))).fields).toEqual([
    { label: "Sender", value: HOT_WALLET },
    { label: "Note", value: "hi" },
    { label: "Block", value: "100" },
    { label: "Transaction", value: TX },
  ]);
  expect(digestHeadline({ id: "d", rule: "pinged", alerts: [alert, alert], attempt: 1 }, 2)).toBe("2 pings for rule pinged on watch w");
  expect(recordFieldExists(PINGS, "note")).toBe(true);
  expect(recordFieldExists(PINGS, "amount")).toBe(false);
});
