import { afterEach, describe, expect, it } from "vitest";
import type { OperationName } from "../../src/explorer/operations.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { ok } from "./http.js";
import { RESPONSE_SCHEMAS, SERVER_RESPONSE_SCHEMAS, nullPaths, pathOf } from "./spec-schemas.js";

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** Every operation, with parameters that hit records, validated against the spec's field tables. */
async function exerciseAllOperations(s: Simulator, seen: Set<string>, schemas: Record<OperationName, { safeParse(value: unknown): { success: boolean; error?: { message: string } } }>): Promise<void> {
  const a = s.addresses;
  const head = s.head();
  const check = async (op: OperationName, params: Record<string, string | number>, query: Record<string, string | number | boolean> = {}) => {
    const body = await ok(s.url, pathOf(op, params), { size: 2000, ...query });
    const parsed = schemas[op].safeParse(body);
    if (!parsed.success) throw new Error(`${op} ${JSON.stringify(params)}: ${parsed.error?.message.slice(0, 2000)}`);
    expect(nullPaths(body), op).toEqual([]);
    note(op, body, seen);
    return body as { results: unknown[] };
  };
  const accounts = [a.busyWallet, a.wallets[5] as string, ...a.tokens, ...a.nftCollections, ...a.contracts];
  for (const account of accounts) {
    // A window as kaiawatch asks for one (the server's property tells the served range).
    const window = { blockNumberStart: Math.max(0, head - 999), blockNumberEnd: head };
    await check("accountEventLogs", { accountAddress: account }, window);
    await check("accountNftTransfers", { accountAddress: account }, window);
    await check("accountInternalTransactions", { accountAddress: account }, window);
    await check("accountNftInventories", { accountAddress: account }, { excludeIfTokenUriIsEmpty: false });
  }
  for (const collection of a.nftCollections) {
    const transfers = (await check("nftTransfers", { tokenAddress: collection }, { blockNumberStart: Math.max(0, head - 999), blockNumberEnd: head })) as { results: { token_id: string }[] };
    await check("nftInventoryDetails", { tokenAddress: collection });
    for (const t of transfers.results.slice(0, 5)) await check("nftItem", { tokenAddress: collection, tokenId: t.token_id });
  }
  for (const block of [head, head - 1, head - 7]) {
    await check("blockInternalTransactions", { blockNumber: block });
    for (const tx of s.truth.blockTransactions(block)) {
      await check("transactionInternalTransactions", { transactionHash: tx.hash });
      await check("transactionNftTransfers", { transactionHash: tx.hash });
      await check("transactionEventLogs", { transactionHash: tx.hash });
    }
  }
}

/** Records which enumeration values and notable shapes were served, to show the chain has them all. */
function note(op: OperationName, body: unknown, seen: Set<string>): void {
  if (typeof (body as { property?: { blockNumberEnd?: unknown } }).property?.blockNumberEnd === "number") seen.add("property:served-range");
  const results = (body as { results?: Record<string, unknown>[] }).results ?? [body as Record<string, unknown>];
  for (const r of results) {
    if (typeof r.type === "string") seen.add(`${op}:type:${r.type}`);
    if (r.estimated_event_log === true) seen.add("event:estimated");
    const status = (r.transaction_status as { status?: string } | undefined)?.status;
    if (status) seen.add(`status:${status}`);
    if ((r.transaction_status as { fail_message?: string } | undefined)?.fail_message) seen.add("fail_message");
    if (r.reverted) seen.add("reverted");
    if (typeof r.amount === "number" && r.amount > 2 ** 53 / 1e18) seen.add("amount>2^53kei");
    if (typeof r.amount === "string" && r.amount.includes(".")) {
      const [whole, fraction = ""] = r.amount.split(".");
      if (BigInt(whole as string) * 10n ** 18n + BigInt(fraction.padEnd(18, "0")) > 2n ** 53n) seen.add("amount>2^53kei");
    }
    const contract = r.contract as { contract_type?: string } | undefined;
    if (contract?.contract_type) seen.add(`nft:${contract.contract_type}`);
    if (r.is_burned === true) seen.add("nft:burned");
    if (r.token_uri === "") seen.add("nft:empty-uri");
    if (typeof r.parent_call_id === "number") seen.add("nested-call");
  }
}

describe("every operation answers in the spec's shapes, or the server's", () => {
  it("server dialect (the default): the shapes klaytn/finder-api answers in", async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 4; seed++) {
      sim = await createSimulator({ seed, initialBlocks: 25, hostile: seed % 2 === 0 });
      await exerciseAllOperations(sim, seen, SERVER_RESPONSE_SCHEMAS);
      await sim.close();
      sim = undefined;
    }
    expect(seen).toContain("property:served-range");
  });

  it("document dialect, over many seeds, plain and hostile", async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 10; seed++) {
      sim = await createSimulator({ seed, initialBlocks: 25, hostile: seed % 2 === 0, dialect: "document" });
      await exerciseAllOperations(sim, seen, RESPONSE_SCHEMAS);
      await sim.close();
      sim = undefined;
    }
    // The synthetic chain holds every kind of record the issue asks for.
    for (const type of ["CALL", "CREATE", "DELEGATECALL", "STATICCALL"]) expect(seen).toContain(`accountInternalTransactions:type:${type}`);
    for (const type of ["Transfer", "Approval", "Unknown", "TransferSingle", "Deposit"]) expect(seen).toContain(`accountEventLogs:type:${type}`);
    for (const kind of ["event:estimated", "status:Success", "status:Fail", "fail_message", "reverted", "nested-call", "amount>2^53kei", "nft:KIP17", "nft:ERC721", "nft:KIP37", "nft:ERC1155", "nft:burned", "nft:empty-uri"]) expect(seen).toContain(kind);
  });
});

describe("the spec schemas used above", () => {
  it("reject what the spec forbids, so the contract test can fail", async () => {
    sim = await createSimulator({ seed: 3, initialBlocks: 5, dialect: "document" });
    const body = await ok<{ results: Record<string, unknown>[] }>(sim.url, pathOf("accountInternalTransactions", { accountAddress: sim.addresses.busyWallet }));
    const record = body.results[0] as Record<string, unknown>;
    expect(RESPONSE_SCHEMAS.accountInternalTransactions.safeParse(body).success).toBe(true);
    const { block_id: _dropped, ...missing } = record;
    expect(RESPONSE_SCHEMAS.accountInternalTransactions.safeParse({ ...body, results: [missing] }).success).toBe(false);
    expect(RESPONSE_SCHEMAS.accountInternalTransactions.safeParse({ ...body, results: [{ ...record, type: 42 }] }).success).toBe(false);
    expect(RESPONSE_SCHEMAS.accountInternalTransactions.safeParse({ ...body, results: [{ ...record, amount: "1.5e3" }] }).success).toBe(false);
    expect(RESPONSE_SCHEMAS.accountInternalTransactions.safeParse({ ...body, results: [{ ...record, surprise: true }] }).success).toBe(false);
    expect(nullPaths({ a: [{ b: null }] })).toEqual(["$.a[0].b"]);
  });
});
