import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileCondition } from "../../src/rules/compile-condition.js";
import { evaluateCondition } from "../../src/rules/evaluate-condition.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import type { RecordFamily, WatchedRecord } from "../../src/model/record.js";

/**
 * The condition compiler on any JSON-like value a YAML file could hold: it never throws.
 * It answers `{ ok: false, issues }` (each issue a path and a message) or a `test` that runs
 * on real records — hostile simulator records included — returning a boolean and agreeing
 * with the reference evaluator.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const FAMILIES: RecordFamily[] = ["event_logs", "nft_transfers", "internal_transactions"];
const WATCHED = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
let sim: Simulator;
const records: Record<RecordFamily, WatchedRecord[]> = { event_logs: [], nft_transfers: [], internal_transactions: [], transactions: [] };

beforeAll(async () => {
  // Hostile text (markup, bidi, 100 KB strings) and odd amounts, straight from the simulator's chain.
  sim = await createSimulator({ seed: 77, initialBlocks: 20, hostile: true });
  const range = { from: sim.head() - 19, to: sim.head() };
  const { busyWallet, busyToken } = sim.addresses;
  records.event_logs = sim.truth.accountEventLogs(busyToken, range).slice(0, 15).map((r) => NORMALIZERS.event_logs(r));
  records.nft_transfers = sim.truth.accountNftTransfers(busyWallet, range).slice(0, 15).map((r) => NORMALIZERS.nft_transfers(r));
  records.internal_transactions = sim.truth.accountInternalTransactions(busyWallet, range).slice(0, 15).map((r) => NORMALIZERS.internal_transactions(r));
});
afterAll(async () => {
  await sim?.close();
});

const FIELD_NAMES = [
  "contract", "signature", "event", "topics[0]", "topics[1]", "topics[3]", "topics[4]", "topics[99999999999999999999]", "args.value", "args.from", "args.",
  "block", "transaction", "log_index", "estimated", "contract_type", "token_id", "from", "to", "token_count", "direction", "mint", "burn",
  "type", "amount", "status", "failed", "error", "fail_message", "method_id", "call_id",
];
const SPECIAL_KEYS = ["all", "any", "not", "eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "contains", "starts_with", "matches", "exists", "__proto__", "constructor", "toString", "hasOwnProperty", ""];
const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...FIELD_NAMES, ...SPECIAL_KEYS) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) });

// Values that sit on the edges of what operands accept: units, exponents, checksums, patterns.
const edgeValue = fc.constantFrom<unknown>(
  null, true, false, 0, -0, -1, 1.5, 1e21, 2 ** 53, Number.MAX_VALUE, Number.NaN, Infinity, -Infinity,
  "", " ", "0", "-5", "10^18", "10^999999", "1e3", "1_000", "1000 KAIA", "1 kei", "0.5 KAIA", "1.0000000000000000001 KAIA", "1 ETH", "KAIA", "-1 KAIA", "1000 * 10^18", "*", "^",
  WATCHED, WATCHED.toLowerCase(), "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "0x", "0x0", `0x${"f".repeat(64)}`, "0xA9059CBB",
  "Transfer(address,address,uint256)", "transfer(address,uint256)", "Transfer(", "Fail", "success", "in", "out", "self", "CALL", "KIP17",
  "/out of gas/i", "/x/g", "(a+)+", "\\1", "[", "(?<n>a)\\k<n>", "a".repeat(300), "/unterminated", ".*", "\u202e\u200b",
);
const when: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    edgeValue,
    fc.string({ maxLength: 10 }),
    fc.integer(),
    fc.double(),
    fc.bigInt(),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
    // The shapes a rule really has, so that accepted conditions are frequent too.
    fc.record({ k: fc.constantFrom(...FIELD_NAMES), op: fc.constantFrom(...SPECIAL_KEYS.slice(3, 15)), v: tie("value") }).map(({ k, op, v }) => ({ [k]: { [op]: v } })),
    fc.record({ k: fc.constantFrom(...FIELD_NAMES), v: edgeValue }).map(({ k, v }) => ({ [k]: v })),
  ),
})).value;

// Leaves each family accepts, so that compiled tests are exercised often, not only refusals.
const VALID: Record<RecordFamily, unknown[]> = {
  event_logs: [
    { event: "Transfer" }, { event: { matches: "/^tr/i" } }, { signature: "Transfer(address,address,uint256)" }, { "topics[1]": WATCHED }, { "args.value": { gt: "10^18 base_units" } },
    { "args.from": { starts_with: "0x" } }, { block: { gte: 1 } }, { log_index: { in: [0, 1, "2"] } }, { estimated: false }, { contract: { exists: true } },
  ],
  nft_transfers: [
    { contract_type: { in: ["KIP17", "KIP37"] } }, { token_id: { lt: "10^30" } }, { from: { ne: WATCHED } }, { to: { exists: false } }, { token_count: { gte: 2 } },
    { mint: true }, { burn: false }, { block: { lte: "200000000" } }, { transaction: { exists: true } },
  ],
  internal_transactions: [
    { type: "CALL" }, { amount: { gte: "0.5 KAIA" } }, { amount: { lt: "1 kei" } }, { status: "Fail" }, { failed: true }, { error: { contains: "gas" } },
    { fail_message: { matches: "revert" } }, { method_id: "transfer(address,uint256)" }, { signature: { starts_with: "w" } }, { call_id: { ne: 0 } }, { to: WATCHED },
  ],
  transactions: [
    { amount: { gte: "0.5 KAIA" } }, { status: "Fail" }, { failed: true }, { fee_payer: { exists: true } }, { method: "transfer" }, { "args.amount": { gt: "1 base_units" } }, { type_int: { in: [9, 10] } },
  ],
};
const validFor = (family: RecordFamily): fc.Arbitrary<unknown> =>
  fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.constantFrom(...VALID[family]),
      fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((all) => ({ all })),
      fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((any) => ({ any })),
      tie("node").map((not) => ({ not })),
      fc.tuple(tie("node"), tie("node")).map(([a, b]) => ({ ...(a as object), ...(b as object) })),
    ),
  })).node;
const familyAndCondition = fc
  .constantFrom(...FAMILIES)
  .chain((family) => fc.tuple(fc.constant(family), fc.oneof(when, validFor(family), validFor(family).chain((v) => when.map((w) => ({ all: [v, w] })))), fc.boolean()));

/** A condition nested deeper than any limit, to prove depth is refused rather than overflowing the stack. */
const deep = fc.integer({ min: 40, max: 5000 }).map((depth) => {
  let node: unknown = { block: { gte: 1 } };
  for (let i = 0; i < depth; i++) node = i % 2 === 0 ? { not: node } : { all: [node] };
  return node;
});

function checkOne(value: unknown, family: RecordFamily, account: boolean): "ok" | "issues" {
  const context = { family, watchedAccounts: account ? new Set([WATCHED.toLowerCase()]) : undefined };
  let result: ReturnType<typeof compileCondition>;
  try {
    result = compileCondition(value, context);
  } catch (error) {
    throw new Error(`compileCondition threw ${String(error)} on ${safeShow(value)} (${family})`, { cause: error });
  }
  if (!result.ok) {
    expect(result.issues.length).toBeGreaterThan(0);
    for (const issue of result.issues) {
      expect(Array.isArray(issue.path)).toBe(true);
      expect(typeof issue.message).toBe("string");
      expect(issue.message.trim()).not.toBe("");
    }
    return "issues";
  }
  for (const other of FAMILIES) {
    for (const record of records[other]) {
      const matched = result.test(record, context.watchedAccounts);
      expect(typeof matched).toBe("boolean");
      // A record of another family never matches.
      if (other !== family) expect(matched).toBe(false);
      else expect(matched, `${safeShow(value)} on ${record.key}`).toBe(evaluateCondition(value, record, context).passed);
    }
  }
  return "ok";
}

function safeShow(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))?.slice(0, 500) ?? String(value);
  } catch {
    return String(value);
  }
}

describe("found by fuzzing", () => {
  it("a bigint where a condition should be is an issue, not a TypeError from JSON.stringify", () => {
    const result = compileCondition({ all: [5n] }, { family: "event_logs" });
    expect(result).toEqual({ ok: false, issues: [{ path: ["all", 0], message: expect.stringContaining("not 5") }] });
  });

  it("a map without a prototype as a bound is an issue naming it a map, not a TypeError from String()", () => {
    const result = compileCondition({ block: { lt: Object.create(null) as object } }, { family: "event_logs" });
    expect(result).toEqual({ ok: false, issues: [{ path: ["block", "lt"], message: "block: a map is not a whole number" }] });
  });
});

describe("fuzzing the condition compiler", () => {
  it("has records of every family to run compiled tests on", () => {
    for (const family of FAMILIES) expect(records[family].length, family).toBeGreaterThan(3);
  });

  it("any JSON-like value: issues or a working test, never a throw", () => {
    const outcomes = { ok: 0, issues: 0 };
    fc.assert(
      fc.property(familyAndCondition, ([family, value, account]) => {
        outcomes[checkOne(value, family, account)] += 1;
      }),
      { numRuns: RUNS },
    );
    if (process.env.FUZZ_DEBUG) console.log(outcomes);
    expect(outcomes.issues).toBeGreaterThan(0);
    expect(outcomes.ok).toBeGreaterThan(0);
  });

  it("conditions nested thousands deep are refused with an issue, not a stack overflow", () => {
    fc.assert(
      fc.property(deep, fc.constantFrom(...FAMILIES), (value, family) => {
        expect(checkOne(value, family, false)).toBe("issues");
      }),
      { numRuns: 20 },
    );
  });
});
