import { describe, expect, it } from "vitest";
import { compileCondition } from "../../src/rules/compile-condition.js";
import { ConditionError, evaluateCondition } from "../../src/rules/evaluate-condition.js";
import { explainRecord } from "../../src/rules/explain-record.js";
import type { ConditionContext, ConditionIssue } from "../../src/rules/parse-condition.js";
import type { WatchedRecord } from "../../src/model/record.js";
import { COLLECTION, DEAD, EXCHANGE, HOT_WALLET, TOKEN, TRANSFER_TOPIC, TX, ZERO, eventLog, internalTx, nftTransfer, topicOf } from "./fixtures.js";

/** Evaluates both ways, compiled and reference, and insists they agree. */
function matches(when: unknown, record: WatchedRecord, context: ConditionContext = { family: record.family }): boolean {
  const compiled = compileCondition(when, context);
  if (!compiled.ok) throw new Error(`unexpected issues: ${JSON.stringify(compiled.issues)}`);
  const result = compiled.test(record, context.watchedAccounts);
  expect(evaluateCondition(when, record, context).passed).toBe(result);
  return result;
}

function issuesOf(when: unknown, context: ConditionContext): ConditionIssue[] {
  const compiled = compileCondition(when, context);
  if (compiled.ok) throw new Error("expected the condition to be refused");
  return compiled.issues;
}

const lower = (s: string) => s.toLowerCase();
const upperHex = (s: string) => `0x${s.slice(2).toUpperCase()}`;

describe("event_logs fields", () => {
  const log = eventLog();
  it.each<[string, unknown, boolean]>([
    ["contract, any letter case", { contract: lower(TOKEN) }, true],
    ["contract, another", { contract: EXCHANGE }, false],
    ["signature written as text", { signature: "Transfer(address,address,uint256)" }, true],
    ["signature of another event", { signature: "Approval(address,address,uint256)" }, false],
    ["signature as an upper-case hash", { signature: upperHex(TRANSFER_TOPIC) }, true],
    ["signature in a list", { signature: { in: ["Approval(address,address,uint256)", "Transfer(address indexed from, address indexed to, uint256 value)"] } }, true],
    ["event name", { event: "Transfer" }, true],
    ["event name is case-sensitive", { event: "transfer" }, false],
    ["event contains", { event: { contains: "ans" } }, true],
    ["event matches", { event: { matches: "^Tr.*r$" } }, true],
    ["event not_in", { event: { not_in: ["Approval", "Transfer"] } }, false],
    ["topics[1] as an address", { "topics[1]": HOT_WALLET }, true],
    ["topics[2] as an upper-case topic", { "topics[2]": upperHex(topicOf(EXCHANGE)) }, true],
    ["topics[1] is not the recipient", { "topics[1]": EXCHANGE }, false],
    ["topics[3] absent", { "topics[3]": { exists: false } }, true],
    ["args.value gt in base units", { "args.value": { gt: "1000000000000000000 base_units" } }, true],
    ["args.value gte with power notation", { "args.value": { gte: "1000 * 10^18 base_units" } }, true],
    ["args.value gte in KAIA, an 18-decimal amount", { "args.value": { gte: "1000 KAIA" } }, true],
    ["args.value gt in kei", { "args.value": { gt: "10^21 kei" } }, false],
    ["args.value gt equal bound", { "args.value": { gt: "10^21 base_units" } }, false],
    ["args.value eq numerically", { "args.value": "1000000000000000000000" }, true],
    ["args.value lt", { "args.value": { lt: "5 base_units" } }, false],
    ["args.to is an address, any case", { "args.to": lower(EXCHANGE) }, true],
    ["args.from in a list", { "args.from": { in: [EXCHANGE, HOT_WALLET] } }, true],
    ["args.from starts_with is text, case-sensitive", { "args.from": { starts_with: "0x5aAe" } }, true],
    ["args.from matches", { "args.from": { matches: "/^0x5AAE/i" } }, true],
    ["args.missing does not exist", { "args.spender": { exists: false } }, true],
    ["args.missing ne holds", { "args.spender": { ne: HOT_WALLET } }, true],
    ["args.missing gt fails", { "args.spender": { gt: "0 base_units" } }, false],
    ["block gte", { block: { gte: 160_000_000 } }, true],
    ["block eq as text", { block: "160000123" }, true],
    ["block lt", { block: { lt: 160_000_123 } }, false],
    ["block lte", { block: { lte: 160_000_123 } }, true],
    ["transaction, upper case", { transaction: upperHex(TX) }, true],
    ["log_index in", { log_index: { in: [3, 4] } }, true],
    ["estimated false", { estimated: false }, true],
  ])("%s", (_name, when, expected) => {
    expect(matches(when, log)).toBe(expected);
  });

  it("reads an address argument against its integer reading only when both are integers", () => {
    const hexValue = eventLog({ items: [{ name: "value", value: "0x3635c9adc5dea00000" }] });
    expect(matches({ "args.value": "1000000000000000000000" }, hexValue)).toBe(false);
    expect(matches({ "args.value": "0x3635C9ADC5DEA00000" }, hexValue)).toBe(true);
    expect(matches({ "args.value": { gt: "0 base_units" } }, hexValue)).toBe(false); // not a decimal integer: no order
    const negative = eventLog({ items: [{ name: "delta", value: "-5" }] });
    expect(matches({ "args.delta": { lt: "0 base_units" } }, negative)).toBe(true);
    const flag = eventLog({ items: [{ name: "approved", value: "true" }] });
    expect(matches({ "args.approved": true }, flag)).toBe(true);
  });

  it("matches estimated and unknown events", () => {
    const guessed = eventLog({ type: "Unknown", estimated_event_log: true });
    expect(matches({ estimated: true }, guessed)).toBe(true);
    expect(matches({ event: "Unknown" }, guessed)).toBe(true);
    expect(matches({ event: { exists: false } }, eventLog({ type: undefined }))).toBe(true);
  });
});

describe("nft_transfers fields", () => {
  const incoming = nftTransfer();
  const account = { family: "nft_transfers" as const, watchedAccounts: new Set([HOT_WALLET.toLowerCase()]) };
  it.each<[string, unknown, boolean]>([
    ["contract", { contract: lower(COLLECTION) }, true],
    ["contract_type, any case", { contract_type: "kip17" }, true],
    ["contract_type in", { contract_type: { in: ["KIP37", "ERC1155"] } }, false],
    ["token_id as a number", { token_id: 42 }, true],
    ["token_id as text", { token_id: "42" }, true],
    ["token_id gt", { token_id: { gt: 41 } }, true],
    ["token_id in", { token_id: { in: [1, 2, 3] } }, false],
    ["from", { from: EXCHANGE }, true],
    ["to, lower case", { to: lower(HOT_WALLET) }, true],
    ["to ne", { to: { ne: HOT_WALLET } }, false],
    ["token_count", { token_count: 1 }, true],
    ["token_count gte", { token_count: { gte: 2 } }, false],
    ["mint", { mint: true }, false],
    ["burn", { burn: false }, true],
    ["block", { block: { gt: 160_000_199 } }, true],
    ["transaction", { transaction: TX }, true],
  ])("%s", (_name, when, expected) => {
    expect(matches(when, incoming)).toBe(expected);
  });

  it("says the direction relative to the watched account", () => {
    expect(matches({ direction: "in" }, incoming, account)).toBe(true);
    expect(matches({ direction: "out" }, incoming, account)).toBe(false);
    expect(matches({ direction: "OUT" }, nftTransfer({ from: lower(HOT_WALLET), to: EXCHANGE }), account)).toBe(true);
    expect(matches({ direction: "self" }, nftTransfer({ from: HOT_WALLET, to: lower(HOT_WALLET) }), account)).toBe(true);
    expect(matches({ direction: { in: ["in", "out"] } }, nftTransfer({ from: EXCHANGE, to: TOKEN }), account)).toBe(false);
  });

  it("keeps each watch's accounts for direction, though rules of one field share its spec and paths", () => {
    const other: ConditionContext = { family: "nft_transfers", watchedAccounts: new Set([lower(EXCHANGE)]) };
    const outgoing = nftTransfer({ from: EXCHANGE, to: HOT_WALLET });
    // The same record, out for one watch and in for the other, whatever order they were compiled in.
    expect(matches({ direction: "out" }, outgoing, other)).toBe(true);
    expect(matches({ direction: "out" }, outgoing, account)).toBe(false);
    expect(matches({ direction: "in" }, outgoing, account)).toBe(true);
    const first = compileCondition({ token_id: { gt: 1 } }, { family: "nft_transfers" });
    const second = compileCondition({ token_id: { gt: 2 } }, { family: "nft_transfers" });
    if (!first.ok || !second.ok || first.node.type !== "test" || second.node.type !== "test") throw new Error("expected two tests");
    expect(second.node.field).toBe(first.node.field);
    expect(second.node.path).toBe(first.node.path);
    expect(second.node.path).toEqual(["token_id", "gt"]);
  });

  it("recognises mints and burns", () => {
    expect(matches({ mint: true }, nftTransfer({ from: ZERO }))).toBe(true);
    expect(matches({ burn: true }, nftTransfer({ to: DEAD }))).toBe(true);
    expect(matches({ burn: true }, nftTransfer({ to: lower(DEAD) }))).toBe(true);
    expect(matches({ burn: true }, nftTransfer({ to: "0xdEaD000000000000000042069420694206942069" }))).toBe(true);
    expect(matches({ burn: true }, nftTransfer({ to: ZERO }))).toBe(true);
    expect(matches({ burn: true }, nftTransfer({ to: undefined }))).toBe(true);
    expect(matches({ any: [{ mint: true }, { burn: true }] }, incoming)).toBe(false);
  });

  it("compares token ids and counts beyond 2^53 exactly", () => {
    const big = nftTransfer({ contract: { contract_address: COLLECTION, contract_type: "KIP37" }, token_id: "115792089237316195423570985008687907853269984665640564039457584007913129639935", token_count: "9007199254740993" });
    expect(matches({ token_id: "115792089237316195423570985008687907853269984665640564039457584007913129639935" }, big)).toBe(true);
    expect(matches({ token_id: { lt: "2^256" } }, big)).toBe(true);
    expect(matches({ token_count: { gt: "9007199254740992" } }, big)).toBe(true);
  });
});

describe("internal_transactions fields", () => {
  const call = internalTx();
  const failed = internalTx({ error: "out of gas", transaction_status: { status: "Fail", fail_message: "execution reverted: Ownable: caller is not the owner" } });
  const creation = internalTx({ type: "CREATE2", to: undefined, amount: "0", method_id: undefined, signature: undefined, transaction_status: undefined });
  it.each<[string, unknown, WatchedRecord, boolean]>([
    ["type, any case", { type: "call" }, call, true],
    ["type in", { type: { in: ["CREATE", "CREATE2"] } }, creation, true],
    ["from", { from: HOT_WALLET }, call, true],
    ["to", { to: lower(EXCHANGE) }, call, true],
    ["to absent on a creation", { to: { exists: false } }, creation, true],
    ["to ne on a creation", { to: { ne: EXCHANGE } }, creation, true],
    ["amount gte 1000 KAIA", { amount: { gte: "1000 KAIA" } }, call, true],
    ["amount gt 1500 KAIA", { amount: { gt: "1500 KAIA" } }, call, false],
    ["amount eq in kei", { amount: "1500000000000000000000 kei" }, call, true],
    ["amount lt with power notation", { amount: { lt: "2 * 10^21 kei" } }, call, true],
    ["amount in", { amount: { in: ["1 KAIA", "1500 KAIA"] } }, call, true],
    ["amount of zero", { amount: { lte: "0 kei" } }, creation, true],
    ["status Success", { status: "Success" }, call, true],
    ["status fail, any case", { status: "fail" }, failed, true],
    ["status absent", { status: { exists: false } }, creation, true],
    ["failed on success", { failed: true }, call, false],
    ["failed on Fail", { failed: true }, failed, true],
    ["error contains", { error: { contains: "out of gas" } }, failed, true],
    ["error absent", { error: { exists: false } }, call, true],
    ["fail_message matches", { fail_message: { matches: "/OWNABLE/i" } }, failed, true],
    ["fail_message starts_with", { fail_message: { starts_with: "execution reverted" } }, failed, true],
    ["method_id as a function signature", { method_id: "transfer(address,uint256)" }, call, true],
    ["method_id as a selector", { method_id: "0xA9059CBB" }, call, true],
    ["method_id of approve", { method_id: "approve(address,uint256)" }, call, false],
    ["signature", { signature: "transfer" }, call, true],
    ["signature starts_with", { signature: { starts_with: "trans" } }, call, true],
    ["call_id", { call_id: { gte: 1 } }, call, true],
    ["block", { block: 160_000_300 }, call, true],
    ["transaction", { transaction: { in: [TX] } }, call, true],
  ])("%s", (_name, when, record, expected) => {
    expect(matches(when, record)).toBe(expected);
  });

  it("counts an error without a failed transaction as failed", () => {
    expect(matches({ failed: true }, internalTx({ error: "revert" }))).toBe(true);
  });

  it("compares amounts to the last kei, never as floats", () => {
    const tiny = internalTx({ amount: "1000.000000000000000001" });
    expect(matches({ amount: { gt: "1000 KAIA" } }, tiny)).toBe(true);
    expect(matches({ amount: "1000000000000000000001 kei" }, tiny)).toBe(true);
    expect(matches({ amount: { gt: "0.3 KAIA" } }, internalTx({ amount: "0.3" }))).toBe(false);
    expect(matches({ amount: { gte: "0.3 KAIA" } }, internalTx({ amount: "0.3" }))).toBe(true);
  });

  it("never matches an amount it cannot read exactly", () => {
    const odd = internalTx({ amount: "1e3" });
    expect(matches({ amount: { gte: "0 kei" } }, odd)).toBe(false);
    expect(matches({ amount: { exists: false } }, odd)).toBe(true);
  });
});

describe("composition", () => {
  const call = internalTx();
  it("tests a regular expression after the cheaper tests beside it, whatever the order written", () => {
    const failed = internalTx({ amount: "1", transaction_status: { status: "Fail", fail_message: "execution reverted: deadline" } });
    // attempted_amount: a failed call moved no value, so `amount` is absent on it.
    for (const when of [{ fail_message: { matches: "/deadline/i" }, attempted_amount: { gt: "1000 KAIA" } }, { any: [{ fail_message: { matches: "/deadline/i" } }, { attempted_amount: { lt: "2 KAIA" } }] }]) {
      const compiled = compileCondition(when, { family: "internal_transactions" });
      if (!compiled.ok) throw new Error("expected the condition to compile");
      const node = compiled.node as Extract<typeof compiled.node, { type: "all" | "any" }>;
      const pattern = node.children.find((c) => c.type === "test" && c.op === "matches") as Extract<typeof node.children[number], { op: "matches" }>;
      const test = pattern.value.test.bind(pattern.value);
      let runs = 0;
      pattern.value.test = (text: string) => (runs++, test(text));
      // all: the amount already says no; any: the amount already says yes.
      expect(compiled.test(failed)).toBe(node.type === "any");
      expect(runs).toBe(0);
      expect(evaluateCondition(when, failed, { family: "internal_transactions" }).passed).toBe(node.type === "any");
    }
  });
  it("combines all, any and not, and several keys mean all of them", () => {
    expect(matches({ all: [{ from: HOT_WALLET }, { amount: { gte: "1000 KAIA" } }] }, call)).toBe(true);
    expect(matches({ from: HOT_WALLET, amount: { gte: "2000 KAIA" } }, call)).toBe(false);
    expect(matches({ amount: { gte: "1000 KAIA", lt: "2000 KAIA" } }, call)).toBe(true);
    expect(matches({ any: [{ status: "Fail" }, { amount: { gt: "1 KAIA" } }] }, call)).toBe(true);
    expect(matches({ not: { status: "Fail" } }, call)).toBe(true);
    expect(matches({ not: { any: [{ type: "CREATE" }, { not: { failed: false } }] } }, call)).toBe(true);
    expect(matches({ all: [{ from: HOT_WALLET }], any: [{ to: TOKEN }, { to: COLLECTION }] }, call)).toBe(false);
  });

  it("matches every record when `when` is absent, and never a record of another family", () => {
    expect(matches(undefined, call)).toBe(true);
    const compiled = compileCondition({ block: { gte: 0 } }, { family: "event_logs" });
    expect(compiled.ok && compiled.test(call)).toBe(false);
  });

  it("explains every step, without short-circuit", () => {
    const { passed, trace } = evaluateCondition({ all: [{ status: "Fail" }, { amount: { gte: "1000 KAIA" } }] }, call, { family: "internal_transactions" });
    expect(passed).toBe(false);
    expect(trace).toEqual([
      { path: ["all"], op: "all", passed: false },
      { path: ["all", 0, "status"], op: "eq", field: "status", expected: "Fail", actual: "Success", passed: false },
      { path: ["all", 1, "amount", "gte"], op: "gte", field: "amount", expected: "1000 KAIA", actual: "1500", passed: true },
    ]);
  });

  it("the reference evaluator refuses an invalid condition with its issues", () => {
    expect(() => evaluateCondition({ amount: { gte: "abc" } }, call, { family: "internal_transactions" })).toThrow(ConditionError);
  });
});

describe("configuration errors name the place inside `when`", () => {
  const it_ = { family: "internal_transactions" as const };
  const nft = { family: "nft_transfers" as const };
  const logs = { family: "event_logs" as const };
  it.each<[string, unknown, ConditionContext, (string | number)[], RegExp]>([
    ["an amount that is not one", { all: [{ from: HOT_WALLET }, { amount: { gte: "abc" } }] }, it_, ["all", 1, "amount", "gte"], /amount: "abc" is not an amount/],
    ["more than 18 decimals", { amount: { gte: "0.0000000000000000001 KAIA" } }, it_, ["amount", "gte"], /finer than 1 kei/],
    ["a float YAML number too precise to be exact", { amount: { gte: 0.12345678901234568 } }, it_, ["amount", "gte"], /quoted text with a unit/],
    ["matches on a number field", { block: { matches: "^1" } }, it_, ["block", "matches"], /block does not take "matches"/],
    ["direction without an account watch", { direction: "in" }, nft, ["direction"], /needs a watch of an account/],
    ["direction value", { direction: "sideways" }, { ...nft, watchedAccounts: new Set([HOT_WALLET.toLowerCase()]) }, ["direction"], /not one of in, out, self/],
    ["a field of another source", { mint: true }, it_, ["mint"], /unknown field "mint".*field of nft_transfers/],
    ["an unknown field", { amout: { gte: "1 KAIA" } }, it_, ["amout"], /unknown field "amout".*fields: type, from/],
    ["an unknown operator", { amount: { gteq: "1 KAIA" } }, it_, ["amount", "gteq"], /unknown operator "gteq"/],
    ["a bad address in a list", { to: { in: [EXCHANGE, "0x123"] } }, it_, ["to", "in", 1], /"0x123" is not an address/],
    ["a checksum typo", { to: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD" }, it_, ["to"], /EIP-55/],
    ["in without a list", { type: { in: "CALL" } }, it_, ["type", "in"], /non-empty list/],
    ["a list without an operator", { type: ["CALL", "CREATE"] }, it_, ["type"], /in: \[\.\.\.\]/],
    ["null instead of exists", { to: null }, it_, ["to"], /exists: false/],
    ["exists with a non-boolean", { error: { exists: "yes" } }, it_, ["error", "exists"], /true or false/],
    ["status that does not exist", { status: "Failed" }, it_, ["status"], /not one of success, fail/],
    ["a boolean written as text", { failed: "true" }, it_, ["failed"], /not true or false/],
    ["a backreference", { error: { matches: "(a)\\1" } }, it_, ["error", "matches"], /a backreference \(\\1 to \\9\), which cannot be matched in linear time/],
    ["a named backreference", { error: { matches: "(?<x>a)\\k<x>" } }, it_, ["error", "matches"], /backreference \(\\k<name>\)/],
    ["a lookahead", { error: { matches: "gas(?= limit)" } }, it_, ["error", "matches"], /lookahead/],
    ["a lookbehind", { error: { matches: "/(?<!not )owner/i" } }, it_, ["error", "matches"], /lookbehind/],
    ["an octal escape", { error: { matches: "\\01" } }, it_, ["error", "matches"], /an octal escape \(\\0 followed by a digit\) is not supported/],
    ["a count RE2 cannot repeat", { error: { matches: "a{1001}" } }, it_, ["error", "matches"], /RE2.*invalid repeat count/],
    ["a pattern too large once compiled", { error: { matches: "[0-9a-f]{500}" } }, it_, ["error", "matches"], /instructions; at most 300/],
    ["a stateful flag", { error: { matches: "/gas/g" } }, it_, ["error", "matches"], /only i, m, s and u/],
    ["an invalid pattern", { error: { matches: "(unclosed" } }, it_, ["error", "matches"], /not a valid regular expression/],
    ["a pattern too long", { error: { matches: "a".repeat(257) } }, it_, ["error", "matches"], /at most 256/],
    ["a bad event signature", { signature: "Transfer(address,address,uint257)" }, logs, ["signature"], /expected a known type/],
    ["a topic that is neither hash nor address", { "topics[1]": "0x1234" }, logs, ["topics[1]"], /neither a 0x topic/],
    ["topics beyond 3", { "topics[4]": { exists: true } }, logs, ["topics[4]"], /at most 4 topics/],
    ["an ordering bound that is not an integer", { "args.value": { gt: "abc base_units" } }, logs, ["args.value", "gt"], /not a number/],
    ["an argument's bound without a unit", { "args.value": { gt: 1000000 } }, logs, ["args.value", "gt"], /args\.value: 1000000 has no unit.*write "1000000 base_units" \(the integer as the contract holds it: what a number without a unit meant until now\), "1000000 KAIA".*"1000000 USDT"/],
    ["an argument's bound without a unit, as text", { "args.value": { lte: "10^24" } }, logs, ["args.value", "lte"], /"10\^24 base_units"/],
    ["an argument's bound in a token symbol outside a token watch", { "args.value": { gt: "5 USDT" } }, logs, ["args.value", "gt"], /unknown unit "USDT"; write "5 base_units"/],
    ["a KAIA amount without a unit", { amount: { gte: "1000" } }, it_, ["amount", "gte"], /amount: 1000 has no unit: write "1000 KAIA" \(what a number without a unit meant until now\), "1000 gkei", or "1000 kei"/],
    ["a KAIA amount as a bare YAML number", { amount: 1500 }, it_, ["amount"], /1500 has no unit: write "1500 KAIA"/],
    ["a token id that is not an integer", { token_id: "abc" }, nft, ["token_id"], /not a number/],
    ["a huge YAML integer", { token_id: 2 ** 60 }, nft, ["token_id"], /quote it/],
    ["an empty all", { all: [] }, it_, ["all"], /non-empty list/],
    ["an empty condition", { not: {} }, it_, ["not"], /empty condition/],
    ["an operator map with no operator", { amount: {} }, it_, ["amount"], /no operator/],
    ["a list as a condition", [{ type: "CALL" }], it_, [], /all: \[\.\.\.\]/],
    ["a text as a condition", "status == Fail", it_, [], /a condition is a map/],
  ])("%s", (_name, when, context, path, message) => {
    const issues = issuesOf(when, context);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toEqual(path);
    expect(issues[0]?.message).toMatch(message);
  });

  it("reports every problem at once", () => {
    const issues = issuesOf({ all: [{ from: "0x1" }, { amount: { gte: "abc", lt: "1 KLAY" } }, { nope: 1 }] }, it_);
    expect(issues.map((i) => i.path)).toEqual([["all", 0, "from"], ["all", 1, "amount", "gte"], ["all", 1, "amount", "lt"], ["all", 2, "nope"]]);
  });

  it("stops at absurd nesting instead of overflowing the stack (YAML aliases can make cycles)", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.not = cyclic;
    const issues = issuesOf(cyclic, it_);
    expect(issues[0]?.message).toMatch(/nest more than 32/);
  });

  it("accepts a readable pattern with nesting that cannot backtrack exponentially", () => {
    expect(compileCondition({ error: { matches: "^(?:out of gas|revert(ed)?)( .*)?$" } }, it_).ok).toBe(true);
    expect(compileCondition({ error: { matches: "(ab)+c*" } }, it_).ok).toBe(true);
  });

  it("matches a hostile revert message in the first 16,384 characters it reads, and explain says so", () => {
    const context = { family: "internal_transactions" as const };
    const hostile = internalTx({ error: "execution reverted", transaction_status: { status: "Fail", fail_message: `${"a".repeat(100 * 1024 - 1)}!` } });
    const compiled = compileCondition({ fail_message: { matches: "/(a|aa)+$/" } }, context);
    if (!compiled.ok) throw new Error("refused");
    // The whole text ends with "!", but what a rule reads is 16,384 "a"s: its end is the text's end.
    // (A record from the explorer is cut to that length when it enters; this one is given to the rule directly.)
    expect(compiled.test(hostile)).toBe(true);
    expect(matches({ fail_message: { matches: "!" } }, hostile)).toBe(false);
    const [line] = explainRecord(compiled.node, hostile, context).lines;
    expect(line?.text).toMatch(/^fail_message "a+…" matches \/\(a\|aa\)\+\$\/ \(in its first 16,384 of 102,400 characters, all a pattern reads\)$/);
  });

  it("accepts the patterns a backtracking engine freezes on, since matching is linear whatever the pattern", () => {
    for (const pattern of ["(a+)+$", "/(a|aa)+$/", "(a|a)*$", ".*.*.*.*.*.*x", "(\\w*\\s?)*$"]) {
      expect(compileCondition({ error: { matches: pattern } }, it_).ok, pattern).toBe(true);
    }
  });
});
