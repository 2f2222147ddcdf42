/**
 * Properties of the boundary, over random records of the three watched kinds:
 * - written in every shape the document and the real server allow (amounts as strings or as
 *   bare numbers, absent fields omitted or null, addresses in either letter case, unknown
 *   fields added, `property` as {} or the served range or left out), a record reads the same
 *   and gets the same alert id;
 * - without, or with a corrupted, field that kaiawatch reads, the answer is refused as
 *   KW_EXPLORER_SHAPE_CHANGED naming that field.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient, type ExplorerClient } from "../../src/explorer/client.js";
import { ExplorerShapeError } from "../../src/explorer/errors.js";
import type { ListOperationName } from "../../src/explorer/client.js";
import { alertId } from "../../src/rules/build-alert.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { startFixtureServer, type FixtureServer } from "./fixture-server.js";

let server: FixtureServer;
let client: ExplorerClient;
beforeAll(async () => {
  server = await startFixtureServer();
  client = createExplorerClient(createTestCommon(), { baseUrl: server.url, requestsPerSecond: 0, maxRetries: 0 });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString("hex")}`);
const address = hex(20);
const hash = hex(32);
const block = fc.integer({ min: 0, max: 2 ** 40 });
const position = fc.integer({ min: 0, max: 5000 });
/** An exact KAIA amount: up to 30 integer digits and 18 decimals. */
const amount = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.bigInt({ min: 0n, max: 10n ** 18n - 1n })).map(([whole, frac]) => (frac === 0n ? whole.toString() : `${whole}.${frac.toString().padStart(18, "0").replace(/0+$/, "")}`));
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const internalTx = fc.record({
  call_id: position,
  block_id: block,
  transaction_hash: hash,
  transaction_index: position,
  fee_payer: optional(address),
  datetime: optional(fc.constant("2025-03-02T01:02:03.000Z")),
  type: fc.constantFrom("CALL", "CREATE", "DELEGATECALL"),
  from: address,
  to: optional(address),
  amount,
  error: optional(fc.string({ maxLength: 20 })),
  method_id: optional(hex(4)),
  transaction_status: optional(fc.record({ status: fc.constantFrom("Success", "Fail") })),
});
const nftTransfer = fc.record({
  contract: fc.record({ contract_address: address, contract_type: optional(fc.constantFrom("KIP17", "KIP37")) }),
  block_id: block,
  transaction_hash: hash,
  fee_payer: optional(address),
  transaction_index: optional(position),
  datetime: fc.constant("2025-03-02T01:02:03.000Z"),
  from: address,
  to: optional(address),
  token_id: fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }).map(String),
  token_count: fc.bigInt({ min: 1n, max: 10n ** 24n }).map(String),
});
const eventLog = fc.record({
  log_index: position,
  contract_address: address,
  type: optional(fc.constantFrom("Transfer", "Unknown")),
  topics: fc.array(hash, { minLength: 1, maxLength: 4 }),
  data: fc.uint8Array({ maxLength: 64 }).map((b) => `0x${Buffer.from(b).toString("hex")}`),
  items: fc.array(fc.record({ name: fc.constantFrom("from", "to", "value"), value: fc.string({ maxLength: 10 }) }), { maxLength: 3 }),
  block_number: block,
  transaction_hash: optional(hash),
  estimated_event_log: optional(fc.boolean()),
});

type Kind = { family: keyof typeof NORMALIZERS; operation: ListOperationName; params: Record<string, unknown>; record: fc.Arbitrary<Record<string, unknown>> };
const KINDS: Kind[] = [
  { family: "internal_transactions", operation: "accountInternalTransactions", params: { accountAddress: `0x${"11".repeat(20)}` }, record: internalTx as fc.Arbitrary<Record<string, unknown>> },
  { family: "nft_transfers", operation: "nftTransfers", params: { tokenAddress: `0x${"22".repeat(20)}` }, record: nftTransfer as fc.Arbitrary<Record<string, unknown>> },
  { family: "event_logs", operation: "accountEventLogs", params: { accountAddress: `0x${"33".repeat(20)}` }, record: eventLog as fc.Arbitrary<Record<string, unknown>> },
];

/** The ways of writing one record that the document and the server both allow. */
interface Variant {
  numbers: boolean;
  nulls: boolean;
  upper: boolean;
  unknown: boolean;
  property: "document" | "served" | "absent";
}
const variant: fc.Arbitrary<Variant> = fc.record({ numbers: fc.boolean(), nulls: fc.boolean(), upper: fc.boolean(), unknown: fc.boolean(), property: fc.constantFrom("document", "served", "absent") });

const OPTIONAL_FIELDS = ["fee_payer", "datetime", "to", "error", "method_id", "transaction_status", "transaction_index", "type", "transaction_hash", "estimated_event_log"];
const HEX_FIELDS = ["from", "to", "fee_payer", "transaction_hash", "contract_address"];

/** The answer's text in one variant. */
function write(record: Record<string, unknown>, v: Variant): string {
  const out: Record<string, unknown> = { ...record };
  for (const key of OPTIONAL_FIELDS) if (out[key] === undefined && v.nulls && key in record) out[key] = null;
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  if (v.upper) for (const key of HEX_FIELDS) if (typeof out[key] === "string") out[key] = `0x${(out[key] as string).slice(2).toUpperCase()}`;
  if (v.unknown) out.fee_delegated = { ratio: 30, nested: [null] };
  const envelope: Record<string, unknown> = { results: [out], paging: { total_count: 1, current_page: 1, last: true, total_page: 1 } };
  if (v.property === "document") envelope.property = {};
  if (v.property === "served") envelope.property = { blockNumberStart: 1, blockNumberEnd: 2 ** 40, blockInterval: 1000 };
  let text = JSON.stringify(envelope);
  // Bare numbers, as the document types them: the exact digits, never a float's.
  if (v.numbers) text = text.replace(/"(amount|token_count)":"([0-9.]+)"/g, '"$1":$2');
  return text;
}

async function read(kind: Kind, text: string): Promise<unknown> {
  server.enqueue({ body: text });
  const call = client[kind.operation] as (params: unknown) => Promise<{ results: unknown[] }>;
  return (await call(kind.params)).results[0];
}

describe("the boundary over random records", () => {
  for (const kind of KINDS) {
    it(`${kind.family}: every allowed way of writing a record reads the same and gets the same alert id`, async () => {
      await fc.assert(
        fc.asyncProperty(kind.record, variant, variant, async (record, a, b) => {
          const first = NORMALIZERS[kind.family]((await read(kind, write(record, a))) as never);
          const second = NORMALIZERS[kind.family]((await read(kind, write(record, b))) as never);
          expect(alertId("rule", second.key)).toBe(alertId("rule", first.key));
          expect(second.block).toBe(first.block);
          const amountOf = (r: typeof first) => (r.data as { amount?: string; token_count?: string }).amount ?? (r.data as { token_count?: string }).token_count;
          expect(amountOf(second)).toBe(amountOf(first));
        }),
        { numRuns: 60 },
      );
    });

    it(`${kind.family}: a read field missing or corrupted is KW_EXPLORER_SHAPE_CHANGED naming it`, async () => {
      const required = Object.keys((await fc.sample(kind.record, 1))[0]!).filter((key) => !OPTIONAL_FIELDS.includes(key) && key !== "items" && key !== "contract");
      await fc.assert(
        fc.asyncProperty(kind.record, fc.constantFrom(...required), fc.constantFrom("missing", "corrupt"), async (record, key, how) => {
          const broken: Record<string, unknown> = { ...record };
          if (how === "missing") delete broken[key];
          else broken[key] = typeof record[key] === "number" ? "12" : Array.isArray(record[key]) ? "[]" : true;
          const error = await read(kind, write(broken, { numbers: false, nulls: false, upper: false, unknown: false, property: "served" })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(ExplorerShapeError);
          expect((error as ExplorerShapeError).code).toBe("KW_EXPLORER_SHAPE_CHANGED");
          expect((error as ExplorerShapeError).field).toBe(`results[].${key}`);
        }),
        { numRuns: 40 },
      );
    });
  }
});
