import { beforeAll, describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { compileCondition } from "../../src/rules/compile-condition.js";
import { FIELDS, OPERATORS_BY_KIND, type FieldKind, type Operator } from "../../src/rules/fields.js";
import { createSimulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import type { RecordFamily, WatchedRecord } from "../../src/model/record.js";

/**
 * Every field of every source, with every operator that applies to it, on records the
 * simulator generated (several seeds, hostile text included, plus a block of edge cases):
 * a compiled condition must select exactly the records that a direct reading of the raw
 * API record selects. The expected side is computed here from the raw fields, with its own
 * lowercasing, hashing and decimal arithmetic, never with src/rules code.
 */

const ZERO = "0x0000000000000000000000000000000000000000";
const DEAD = ["0x000000000000000000000000000000000000dead", "0xdead000000000000000042069420694206942069"];
const SEEDS: { seed: number; hostile: boolean }[] = [
  { seed: 1, hostile: false },
  { seed: 2, hostile: false },
  { seed: 3, hostile: false },
  { seed: 4, hostile: false },
  { seed: 7, hostile: true },
  { seed: 8, hostile: true },
];

const keccak = (text: string) => `0x${bytesToHex(keccak_256(utf8ToBytes(text)))}`;
const lc = (v: unknown) => (typeof v === "string" ? v.toLowerCase() : undefined);
const upperHex = (v: string) => `0x${v.slice(2).toUpperCase()}`;

/** A whole number from the raw JSON (decimal text or a safe number). */
function int(v: unknown): bigint | undefined {
  if (typeof v === "number") return Number.isSafeInteger(v) ? BigInt(v) : undefined;
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v);
  return undefined;
}

/** KAIA decimal text (or a number) in kei, by string arithmetic. */
function kei(v: unknown): bigint | undefined {
  const text = typeof v === "number" ? String(v) : v;
  if (typeof text !== "string") return undefined;
  const m = /^(\d+)(?:\.(\d{1,18}))?$/.exec(text);
  if (!m) return undefined;
  return BigInt(m[1] as string) * 10n ** 18n + BigInt((m[2] ?? "").padEnd(18, "0"));
}

const formatKaia = (k: bigint) => {
  const fraction = (k % 10n ** 18n).toString().padStart(18, "0").replace(/0+$/, "");
  return fraction === "" ? `${k / 10n ** 18n}` : `${k / 10n ** 18n}.${fraction}`;
};

interface ArgReading {
  text: string;
  int: bigint | undefined;
  hex: string | undefined;
}
const argReading = (text: string): ArgReading => ({ text, int: /^-?\d+$/.test(text) ? BigInt(text) : undefined, hex: /^0x[0-9a-fA-F]*$/.test(text) ? text.toLowerCase() : undefined });

type Reading = string | bigint | boolean | ArgReading | undefined;

/** What a field holds in a raw record, read here without src/rules. */
function read(family: RecordFamily, field: string, raw: Record<string, unknown>, account: string): Reading {
  const topics = family === "event_logs" ? (raw.topics as string[]).map((t) => t.toLowerCase()) : [];
  if (field.startsWith("topics[")) return topics[Number(field.slice(7, -1))];
  if (field.startsWith("args.")) {
    const item = (raw.items as { name: string; value: string }[]).find((i) => i.name === field.slice(5));
    return item === undefined ? undefined : argReading(item.value);
  }
  if (field === "transaction") return lc(raw.transaction_hash);
  switch (family) {
    case "event_logs":
      return ({ contract: lc(raw.contract_address), signature: topics[0], event: raw.type as string | undefined, block: int(raw.block_number), log_index: int(raw.log_index), estimated: raw.estimated_event_log === true } as Record<string, Reading>)[field];
    case "nft_transfers": {
      const contract = raw.contract as { contract_address: string; contract_type?: string };
      const from = lc(raw.from);
      const to = lc(raw.to);
      const direction = from === account ? (to === account ? "self" : "out") : to === account ? "in" : undefined;
      return ({
        contract: lc(contract.contract_address),
        contract_type: lc(contract.contract_type),
        token_id: int(raw.token_id),
        from,
        to,
        token_count: int(raw.token_count),
        direction,
        mint: from === ZERO,
        burn: to === undefined || to === ZERO || DEAD.includes(to),
        block: int(raw.block_id),
      } as Record<string, Reading>)[field];
    }
    case "internal_transactions": {
      const status = raw.transaction_status as { status: string; fail_message?: string } | undefined;
      const failed = (typeof raw.error === "string" && raw.error !== "") || status?.status === "Fail";
      return ({
        type: lc(raw.type),
        from: lc(raw.from),
        to: lc(raw.to),
        // Value moved: a failed call (or one in a failed transaction) moved none.
        amount: failed ? undefined : kei(raw.amount),
        attempted_amount: kei(raw.amount),
        status: lc(status?.status),
        failed,
        error: raw.error as string | undefined,
        fail_message: status?.fail_message,
        method_id: lc(raw.method_id),
        signature: raw.signature as string | undefined,
        call_id: int(raw.call_id),
        block: int(raw.block_id),
      } as Record<string, Reading>)[field];
    }
  }
}

/** A value as a rule writes it, and the reading it stands for. */
interface Written {
  written: unknown;
  means: Reading;
}

/** The meaning of one operator, from the documentation, over this file's readings. */
function holds(op: Operator, kind: FieldKind, value: Reading, operand: Reading | Reading[] | RegExp | boolean): boolean {
  const equal = (a: Reading, b: Reading): boolean => {
    if (a === undefined || b === undefined) return false;
    if (kind !== "arg") return a === b;
    const x = a as ArgReading;
    const y = b as ArgReading;
    if (x.int !== undefined && y.int !== undefined) return x.int === y.int;
    if (x.hex !== undefined && y.hex !== undefined) return x.hex === y.hex;
    return x.text === y.text;
  };
  const number = kind === "arg" ? (value as ArgReading | undefined)?.int : (value as bigint | undefined);
  const text = kind === "arg" ? (value as ArgReading | undefined)?.text : (value as string | undefined);
  const bound = operand as bigint;
  switch (op) {
    case "eq":
      return equal(value, operand as Reading);
    case "ne":
      return !equal(value, operand as Reading);
    case "in":
      return (operand as Reading[]).some((o) => equal(value, o));
    case "not_in":
      return !(operand as Reading[]).some((o) => equal(value, o));
    case "gt":
      return number !== undefined && number > bound;
    case "gte":
      return number !== undefined && number >= bound;
    case "lt":
      return number !== undefined && number < bound;
    case "lte":
      return number !== undefined && number <= bound;
    case "contains":
      return typeof text === "string" && text.includes(operand as string);
    case "starts_with":
      return typeof text === "string" && text.startsWith(operand as string);
    case "matches":
      return typeof text === "string" && (operand as RegExp).test(text);
    case "exists":
      return (value !== undefined) === operand;
  }
}

interface Case {
  field: string;
  op: Operator;
  when: Record<string, unknown>;
  expected: (raw: Record<string, unknown>) => boolean;
}

/** A few values actually present, spread over their range (sorted by text so the pick is stable). */
function spread<T>(values: T[], count = 4): T[] {
  const distinct = [...new Map(values.map((v) => [typeof v === "object" ? JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x)) : String(v), v])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  if (distinct.length <= count) return distinct;
  return Array.from({ length: count }, (_, i) => distinct[Math.floor((i * (distinct.length - 1)) / (count - 1))] as T);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** How a rule writes a present value of each kind (in a letter case or unit other than the record's). */
function writings(kind: FieldKind, field: string, value: Reading, index: number): Written[] {
  switch (kind) {
    case "address":
      return [{ written: index % 2 ? upperHex(value as string) : (value as string), means: value }];
    case "hash": {
      const out: Written[] = [{ written: upperHex(value as string), means: value }];
      if (field.startsWith("topics[") && /^0x0{24}[0-9a-f]{40}$/.test(value as string)) out.push({ written: upperHex(`0x${(value as string).slice(26)}`), means: value });
      return out;
    }
    case "keyword":
      return [{ written: index % 2 ? (value as string).toUpperCase() : value, means: value }];
    case "text":
      return [{ written: value, means: value }];
    case "integer":
      return [{ written: index % 2 || (value as bigint) > BigInt(Number.MAX_SAFE_INTEGER) ? (value as bigint).toString() : Number(value), means: value }];
    case "amount":
      return [{ written: index % 2 ? `${(value as bigint).toString()} kei` : `${formatKaia(value as bigint)} KAIA`, means: value }];
    case "boolean":
      return [{ written: value, means: value }];
    case "arg": {
      const a = value as ArgReading;
      if (a.hex !== undefined && a.hex.length > 2) return [{ written: upperHex(a.text), means: argReading(upperHex(a.text)) }];
      const out: Written[] = [{ written: a.text, means: a }];
      // Plain text compares exactly: another letter case is another value.
      if (a.int === undefined && a.text.toUpperCase() !== a.text) out.push({ written: a.text.toUpperCase(), means: argReading(a.text.toUpperCase()) });
      return out;
    }
  }
}

/** Values no record holds, per kind. */
function absent(kind: FieldKind, field: string): Written {
  switch (kind) {
    case "address":
      return { written: "0x00000000000000000000000000000000000000aa", means: "0x00000000000000000000000000000000000000aa" };
    case "hash":
      return field === "method_id" ? { written: "0xdeadbeef", means: "0xdeadbeef" } : { written: `0x${"ee".repeat(32)}`, means: `0x${"ee".repeat(32)}` };
    case "keyword":
      return field === "status" ? { written: "Success", means: "success" } : field === "direction" ? { written: "self", means: "self" } : { written: "NOPE", means: "nope" };
    case "text":
      return { written: "no record says this", means: "no record says this" };
    case "integer":
      return { written: "123456789123456789123456789", means: 123456789123456789123456789n };
    case "amount":
      return { written: "123456789123456789123456789 KAIA", means: 123456789123456789123456789n * 10n ** 18n };
    case "boolean":
      return { written: false, means: false };
    case "arg":
      return { written: "no such value", means: argReading("no such value") };
  }
}

/** Every (field, operator) case for a family, built from the values present in its records. */
function casesFor(family: RecordFamily, raws: Record<string, unknown>[], account: string): Case[] {
  const fieldNames: string[] = [];
  for (const name of Object.keys(FIELDS[family])) {
    if (name === "topics[i]") fieldNames.push("topics[0]", "topics[1]", "topics[2]", "topics[3]");
    else if (name === "args.NAME") {
      const names = new Set(raws.flatMap((r) => (r.items as { name: string }[]).map((i) => i.name)));
      fieldNames.push(...[...names].sort().map((n) => `args.${n}`), "args.nonexistent");
    } else fieldNames.push(name);
  }
  const cases: Case[] = [];
  for (const field of fieldNames) {
    const template = FIELDS[family][field.startsWith("topics[") ? "topics[i]" : field.startsWith("args.") ? "args.NAME" : field];
    const kind = (template as { kind: FieldKind }).kind;
    const present = raws.map((r) => read(family, field, r, account)).filter((v): v is Exclude<Reading, undefined> => v !== undefined);
    const samples = spread(present).flatMap((v, i) => writings(kind, field, v, i));
    if (field === "signature" && family === "event_logs") samples.push({ written: "Transfer(address,address,uint256)", means: keccak("Transfer(address,address,uint256)") });
    if (field === "method_id") {
      const signatures = spread(raws.map((r) => r.signature).filter((s): s is string => typeof s === "string" && /^\w+\(.*\)$/.test(s)));
      for (const s of signatures) samples.push({ written: s, means: keccak(s).slice(0, 10) });
    }
    const none = absent(kind, field);
    const add = (op: Operator, operand: unknown, meaning: Reading | Reading[] | RegExp | boolean, shorthand = false) =>
      cases.push({ field, op, when: shorthand ? { [field]: operand } : { [field]: { [op]: operand } }, expected: (raw) => holds(op, kind, read(family, field, raw, account), meaning) });

    for (const op of OPERATORS_BY_KIND[kind]) {
      switch (op) {
        case "eq":
        case "ne":
          for (const s of [...samples, none]) add(op, s.written, s.means);
          if (op === "eq" && samples[0]) add(op, samples[0].written, samples[0].means, true);
          break;
        case "in":
        case "not_in": {
          const list = [...samples.slice(0, 1), none];
          add(op, list.map((s) => s.written), list.map((s) => s.means));
          if (samples.length > 1) add(op, samples.slice(1).map((s) => s.written), samples.slice(1).map((s) => s.means));
          break;
        }
        case "gt":
        case "gte":
        case "lt":
        case "lte": {
          const numbers = present.map((v) => (kind === "arg" ? (v as ArgReading).int : (v as bigint))).filter((n): n is bigint => n !== undefined);
          for (const n of spread(numbers, 3)) add(op, kind === "amount" ? `${formatKaia(n)} KAIA` : kind === "arg" ? `${n} base_units` : n.toString(), n);
          break;
        }
        case "contains":
        case "starts_with":
        case "matches": {
          const texts = present.map((v) => (kind === "arg" ? (v as ArgReading).text : (v as string))).filter((t) => t.length > 0);
          for (const t of spread(texts, 3)) {
            const part = op === "contains" ? t.slice(Math.floor(t.length / 3), Math.floor(t.length / 3) + 12) : t.slice(0, 8);
            if (op === "matches") {
              add(op, `/${escapeRegExp(part)}/i`, new RegExp(escapeRegExp(part), "i"));
              add(op, `^${escapeRegExp(part)}`, new RegExp(`^${escapeRegExp(part)}`));
            } else add(op, part, part);
          }
          add(op, op === "matches" ? "^no record says this$" : "no record says this", op === "matches" ? /^no record says this$/ : "no record says this");
          break;
        }
        case "exists":
          add(op, true, true);
          add(op, false, false);
          break;
      }
    }
  }
  return cases;
}

interface Data {
  records: Record<RecordFamily, WatchedRecord[]>;
  account: string;
}

/** Records of every family from several simulated chains, with one block of edge cases each. */
async function gather(): Promise<Data> {
  const records: Data["records"] = { event_logs: [], nft_transfers: [], internal_transactions: [], transactions: [] };
  let account = "";
  for (const { seed, hostile } of SEEDS) {
    const sim = await createSimulator({ seed, hostile, initialBlocks: 40, startBlock: 100_000_000 + seed * 1000 });
    try {
      const [w0, w1] = sim.addresses.wallets as [string, string];
      const odd = "0x00000000000000000000000000000000000c0ffe";
      if (account === "") account = sim.addresses.busyWallet.toLowerCase();
      sim.addBlock({
        eventLogs: [
          { type: "Unknown", topics: [keccak("Mystery(uint256)")], items: [], estimated_event_log: true },
          { type: "Transfer", estimated_event_log: false, items: [{ name: "from", value: upperHex(w0) }, { name: "to", value: w1 }, { name: "value", value: "115792089237316195423570985008687907853269984665640564039457584007913129639935" }] },
          { items: [{ name: "flag", value: "true" }, { name: "value", value: "0x2A" }, { name: "value", value: "7" }, { name: "memo", value: "Hello Kaia" }] },
        ],
        nftTransfers: [
          { from: w0, to: DEAD[0] },
          { from: upperHex(w1), to: DEAD[1] },
          { from: w0, to: w0, token_count: "12" },
          { from: w1, to: upperHex(w0) },
          { from: ZERO, to: w1, token_id: "115792089237316195423570985008687907853269984665640564039457584007913129639935" },
          { contract: { contract_address: odd }, from: w0, to: undefined },
        ],
        internalTransactions: [
          { type: "SELFDESTRUCT", from: w0, to: undefined, amount: "0.000000000000000001" },
          { type: "CALL", from: upperHex(w0), to: w1, amount: 2 as unknown as string, error: "out of gas", transaction_status: { status: "Success" } },
          { type: "CREATE2", from: w1, amount: "1000000", error: "", transaction_status: { status: "Fail" } },
          { type: "CALL", from: w1, to: w0, amount: "0.5", method_id: "0xA9059CBB", signature: "transfer(address,uint256)", transaction_status: { status: "Fail", fail_message: "execution reverted: ERC20: transfer amount exceeds balance" } },
        ],
      });
      const all = { from: 0, to: sim.head() };
      const emitters = [...sim.addresses.tokens, ...sim.addresses.nftCollections, ...sim.addresses.contracts];
      for (const a of emitters) records.event_logs.push(...sim.truth.accountEventLogs(a, all).map((r) => NORMALIZERS.event_logs(r)));
      for (const c of [...sim.addresses.nftCollections, odd]) records.nft_transfers.push(...sim.truth.nftTransfers(c, all).map((r) => NORMALIZERS.nft_transfers(r)));
      for (let b = 100_000_000 + seed * 1000; b <= sim.head(); b++) records.internal_transactions.push(...sim.truth.blockInternalTransactions(b).map((r) => NORMALIZERS.internal_transactions(r)));
    } finally {
      await sim.close();
    }
  }
  return { records, account };
}

let data: Data;
beforeAll(async () => {
  data = await gather();
});

describe.each<RecordFamily>(["event_logs", "nft_transfers", "internal_transactions"])("%s: every field and operator on simulator data", (family) => {
  it("the compiled condition selects exactly what a direct reading of the raw records selects", () => {
    const records = data.records[family];
    expect(records.length).toBeGreaterThan(500);
    const raws = records.map((r) => r.data as unknown as Record<string, unknown>);
    const cases = casesFor(family, raws, data.account);
    const watchedAccounts = data.account === undefined ? undefined : new Set([data.account.toLowerCase()]);
    const compiled = cases.map((c) => {
      const result = compileCondition(c.when, { family, watchedAccounts });
      if (!result.ok) throw new Error(`${JSON.stringify(c.when)} was refused: ${JSON.stringify(result.issues)}`);
      return result.test;
    });
    const selected = cases.map(() => 0);
    const mismatches: string[] = [];
    records.forEach((record, r) => {
      const raw = raws[r] as Record<string, unknown>;
      cases.forEach((c, i) => {
        const actual = (compiled[i] as (x: WatchedRecord, a: ReadonlySet<string> | undefined) => boolean)(record, watchedAccounts);
        if (actual) selected[i] = (selected[i] as number) + 1;
        if (actual !== c.expected(raw) && mismatches.length < 10) mismatches.push(`${JSON.stringify(c.when)} on ${record.key}: compiled ${actual}, expected ${!actual}`);
      });
    });
    expect(mismatches).toEqual([]);

    // Coverage: every field with every operator of its kind, and conditions that really discriminate.
    const covered = new Set(cases.map((c) => `${c.field.replace(/^topics\[\d\]$/, "topics[i]").replace(/^args\..*$/, "args.NAME")} ${c.op}`));
    for (const [name, template] of Object.entries(FIELDS[family])) {
      for (const op of OPERATORS_BY_KIND[template.kind]) expect(covered, `${name} ${op}`).toContain(`${name} ${op}`);
    }
    const byFieldOp = new Map<string, number[]>();
    cases.forEach((c, i) => byFieldOp.set(`${c.field} ${c.op}`, [...(byFieldOp.get(`${c.field} ${c.op}`) ?? []), selected[i] as number]));
    for (const [key, counts] of byFieldOp) {
      // Each field/operator pair selects some records with some condition, and leaves some out with another (or the same).
      if (key.startsWith("args.nonexistent") || key.endsWith(" exists")) continue;
      expect(counts.some((n) => n > 0), `${key} selects something`).toBe(true);
      expect(counts.some((n) => n < records.length), `${key} leaves something out`).toBe(true);
    }
  });
});
