import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileCondition } from "../../src/rules/compile-condition.js";
import { createRuleIndex, type IndexedRule } from "../../src/rules/rule-index.js";
import type { RecordFamily, WatchedRecord } from "../../src/model/record.js";
import { RECORDS, condition, contextOf } from "./condition-arbitraries.js";
import { EXCHANGE, HOT_WALLET, TOKEN, eventLog, internalTx, nftTransfer } from "./fixtures.js";

interface TestRule extends IndexedRule {
  name: string;
}

const FAMILIES: RecordFamily[] = ["event_logs", "nft_transfers", "internal_transactions", "transactions"];

function ruleOf(name: string, when: unknown, family: RecordFamily): TestRule {
  const compiled = compileCondition(when, contextOf(family));
  if (!compiled.ok) throw new Error(`generated an invalid condition: ${JSON.stringify(compiled.issues)}`);
  return { name, test: compiled.test, condition: compiled.node };
}

/** What the poller did before the index: every rule on every record, in rule order. */
const everyRule = (rules: readonly TestRule[], record: WatchedRecord) => rules.filter((rule) => rule.test(record)).map((rule) => rule.name);
const indexed = (index: ReturnType<typeof createRuleIndex<TestRule>>, record: WatchedRecord) =>
  index
    .candidates(record)
    .filter((rule) => rule.test(record))
    .map((rule) => rule.name);

describe("the rule index", () => {
  it.each(FAMILIES)("finds exactly the rules that match, in rule order, on random %s rules and records", (family) => {
    let skipped = 0;
    let considered = 0;
    let matched = 0;
    // A hand-made rule (no compiled condition behind its test) must never be skipped.
    const handMade = fc.constantFrom<TestRule | undefined>(undefined, { name: "hand-made", test: (record) => record.block % 2 === 1 });
    // Records of the other families too: the index reads fields a record may not have.
    const records = fc.array(fc.oneof({ arbitrary: RECORDS[family], weight: 4 }, ...FAMILIES.filter((f) => f !== family).map((f) => ({ arbitrary: RECORDS[f], weight: 1 }))), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(fc.array(condition(family), { minLength: 1, maxLength: 8 }), handMade, fc.nat(8), records, (whens, extra, at, recordList) => {
        const rules = whens.map((when, i) => ruleOf(`rule-${i}`, when, family));
        if (extra) rules.splice(Math.min(at, rules.length), 0, extra);
        const index = createRuleIndex(rules, { minRules: 1 });
        for (const record of recordList) {
          const expected = everyRule(rules, record);
          expect(indexed(index, record)).toEqual(expected);
          considered += rules.length;
          skipped += rules.length - index.candidates(record).length;
          matched += expected.length;
        }
      }),
      { numRuns: 1000 },
    );
    // The property says something only if the index does skip rules and rules do match.
    expect(skipped / considered).toBeGreaterThan(0.1);
    expect(matched / considered).toBeGreaterThan(0.1);
  });

  it("agrees on event arguments whose equal values are written differently", () => {
    // Equal values in other spellings (10^21 and 1000…000, 0x2A and 0x2a, 42 and 042), which
    // the general property draws too rarely to prove that each reading is looked up.
    const spellings = ["10^21", "1000000000000000000000", "0x2A", "0x2a", "42", "042", "Transfer", HOT_WALLET, HOT_WALLET.toLowerCase()];
    const ruleValue = fc.oneof(fc.constantFrom(...spellings), fc.constantFrom(42, true));
    const test = fc.oneof(ruleValue, ruleValue.map((eq) => ({ eq })), fc.array(ruleValue, { minLength: 1, maxLength: 3 }).map((values) => ({ in: values })));
    const when = fc.oneof(
      test.map((t) => ({ "args.value": t })),
      fc.tuple(test, test).map(([a, b]) => ({ any: [{ "args.value": a }, { "args.from": b }] })),
      fc.tuple(test, test).map(([a, b]) => ({ all: [{ "args.from": a }, { "args.value": b }] })),
    );
    const record = fc
      .tuple(fc.constantFrom(...spellings, "43"), fc.constantFrom(...spellings))
      .map(([value, from]) => eventLog({ items: [{ name: "from", value: from }, { name: "value", value }] }));
    let matched = 0;
    fc.assert(
      fc.property(fc.array(when, { minLength: 1, maxLength: 6 }), fc.array(record, { minLength: 1, maxLength: 6 }), (whens, records) => {
        const rules = whens.map((w, i) => ruleOf(`rule-${i}`, w, "event_logs"));
        const index = createRuleIndex(rules, { minRules: 1 });
        for (const r of records) {
          const expected = everyRule(rules, r);
          expect(indexed(index, r)).toEqual(expected);
          matched += expected.length;
        }
      }),
      { numRuns: 500 },
    );
    expect(matched).toBeGreaterThan(100);
  });

  it("leaves out the rules that name other accounts, and keeps the rest in config order", () => {
    const rules = [
      ruleOf("any-large", { "args.value": { gte: "10^21 base_units" } }, "event_logs"),
      ruleOf("from-exchange", { "args.from": EXCHANGE }, "event_logs"),
      ruleOf("to-exchange", { all: [{ event: "Transfer" }, { "args.to": EXCHANGE.toUpperCase().replace("0X", "0x") }] }, "event_logs"),
      ruleOf("from-hot", { any: [{ "args.from": HOT_WALLET }, { "topics[1]": HOT_WALLET }] }, "event_logs"),
      ruleOf("not-token", { not: { contract: TOKEN } }, "event_logs"),
    ];
    const index = createRuleIndex(rules, { minRules: 1 });
    const names = (record: WatchedRecord) => index.candidates(record).map((rule) => rule.name);
    // The fixture sends from HOT_WALLET to EXCHANGE.
    expect(names(eventLog())).toEqual(["any-large", "to-exchange", "from-hot", "not-token"]);
    expect(indexed(index, eventLog())).toEqual(["any-large", "to-exchange", "from-hot"]);
    const elsewhere = eventLog({ items: [{ name: "from", value: TOKEN }, { name: "to", value: TOKEN }], topics: [] });
    expect(names(elsewhere)).toEqual(["any-large", "not-token"]);
  });

  it("files equal values under every reading: integers, hex in any case, plain text", () => {
    const rules = [
      ruleOf("int", { "args.value": "10^21" }, "event_logs"),
      ruleOf("hex", { "args.value": "0x2A" }, "event_logs"),
      ruleOf("text", { "args.value": "Transfer" }, "event_logs"),
    ];
    const index = createRuleIndex(rules, { minRules: 1 });
    const valued = (value: string) => eventLog({ items: [{ name: "value", value }] });
    expect(indexed(index, valued("1000000000000000000000"))).toEqual(["int"]);
    expect(indexed(index, valued("0x2a"))).toEqual(["hex"]);
    expect(indexed(index, valued("Transfer"))).toEqual(["text"]);
    expect(index.candidates(valued("transfer"))).toEqual([]);
  });

  it("indexes the fields of NFT transfers and internal transactions", () => {
    const nft = [ruleOf("to-exchange", { to: { in: [EXCHANGE, TOKEN] } }, "nft_transfers"), ruleOf("burn", { all: [{ burn: true }, { token_id: { lt: 5 } }] }, "nft_transfers")];
    const nftIndex = createRuleIndex(nft, { minRules: 1 });
    expect(nftIndex.candidates(nftTransfer({ from: HOT_WALLET, to: EXCHANGE })).map((r) => r.name)).toEqual(["to-exchange"]);
    expect(nftIndex.candidates(nftTransfer({ from: HOT_WALLET, to: HOT_WALLET }))).toEqual([]);
    const internal = [ruleOf("big", { amount: { gte: "1000 KAIA" } }, "internal_transactions"), ruleOf("create-from", { type: "CREATE", from: EXCHANGE }, "internal_transactions")];
    const internalIndex = createRuleIndex(internal, { minRules: 1 });
    expect(internalIndex.candidates(internalTx({ from: HOT_WALLET, type: "CREATE" })).map((r) => r.name)).toEqual(["big"]);
    expect(internalIndex.candidates(internalTx({ from: EXCHANGE.toLowerCase(), type: "CALL" })).map((r) => r.name)).toEqual(["big", "create-from"]);
  });
});

describe("the rule index on text outside ASCII", () => {
  it("still finds a value whose lower case is longer than itself (İ lowers to two characters)", () => {
    const rules = ["KİP17", "kİp37", "ERC721", "erc1155"].map((type, i) => ruleOf(`type-${i}`, { contract_type: type }, "nft_transfers"));
    const index = createRuleIndex(rules, { minRules: 1 });
    for (const type of ["KİP17", "kİP17", "KIP17", "kİp37", "erc721", "ERC1155", "Éxotic"]) {
      const record = nftTransfer({ contract: { contract_address: TOKEN, contract_type: type } });
      expect(indexed(index, record)).toEqual(everyRule(rules, record));
    }
    expect(indexed(index, nftTransfer({ contract: { contract_address: TOKEN, contract_type: "kİp17" } }))).toEqual(["type-0"]);
  });
});

describe("a short list of rules", () => {
  it("is not indexed: every rule is a candidate, in order", () => {
    const rules = [ruleOf("a", { "args.from": EXCHANGE }, "event_logs"), ruleOf("b", { "args.from": TOKEN }, "event_logs")];
    expect(createRuleIndex(rules).candidates(eventLog()).map((r) => r.name)).toEqual(["a", "b"]);
    expect(createRuleIndex(rules, { minRules: 2 }).candidates(eventLog()).map((r) => r.name)).toEqual([]);
  });
});
