import { describe, expect, it } from "vitest";
import { kaiaToKei } from "../../src/chain/units.js";
import { EVENTS, padAddress, uint256Hex } from "../../src/simulator/abi.js";
import type { Simulator } from "../../src/simulator/index.js";
import { rpc } from "./http.js";
import { startSimulator } from "./start.js";

const start = startSimulator;

const hex = (n: number) => `0x${n.toString(16)}`;
const WORD = (n: bigint) => `0x${uint256Hex(n)}`;

async function call(s: Simulator, method: string, params: unknown[]): Promise<{ result?: string; error?: { code: number; message: string } }> {
  return (await rpc(s.rpcUrl, { jsonrpc: "2.0", id: 1, method, params })) as { result?: string; error?: { code: number; message: string } };
}
async function kaia(s: Simulator, address: string, block: number | "earliest" | "latest"): Promise<bigint> {
  const answer = await call(s, "eth_getBalance", [address, typeof block === "number" ? hex(block) : block]);
  if (answer.result === undefined) throw new Error(JSON.stringify(answer.error));
  return BigInt(answer.result);
}
async function token(s: Simulator, contract: string, owner: string, block: number | "earliest" | "latest"): Promise<bigint> {
  const answer = await call(s, "eth_call", [{ to: contract, data: `0x70a08231${padAddress(owner).slice(2)}` }, typeof block === "number" ? hex(block) : block]);
  if (answer.result === undefined) throw new Error(JSON.stringify(answer.error));
  return BigInt(answer.result);
}

describe("simulator balances follow its records", () => {
  it("a KAIA balance at block N is the genesis amount plus the successful calls to and from the address up to N", async () => {
    const s = await start({ seed: 3, initialBlocks: 150 });
    const first = s.head() - 149;
    for (const wallet of [s.addresses.busyWallet, s.addresses.wallets[5]!, s.addresses.contracts[0]!]) {
      const genesis = await kaia(s, wallet, "earliest");
      for (const n of [first, first + 40, first + 99, s.head()]) {
        let expected = genesis;
        for (const c of s.truth.accountInternalTransactions(wallet, { from: first, to: n })) {
          if (c.transaction_status?.status !== "Success" || c.error !== undefined || c.from === c.to) continue;
          const kei = kaiaToKei(String(c.amount));
          if (c.to === wallet) expected += kei;
          if (c.from === wallet) expected -= kei;
        }
        expect(await kaia(s, wallet, n)).toBe(expected);
      }
      expect(await kaia(s, wallet, "latest")).toBe(await kaia(s, wallet, s.head()));
      // Not vacuous: the address did move.
      expect(await kaia(s, wallet, s.head())).not.toBe(genesis);
    }
  });

  it("a KIP-7 balance at block N is the genesis amount plus its Transfer logs up to N, for tokens with 18, 6 and 0 decimals", async () => {
    const s = await start({ seed: 4, initialBlocks: 150 });
    const first = s.head() - 149;
    for (const contract of s.addresses.tokens) {
      for (const wallet of [s.addresses.busyWallet, s.addresses.wallets[7]!]) {
        const genesis = await token(s, contract, wallet, "earliest");
        const logs = s.truth.accountEventLogs(contract, { from: first, to: s.head(), signature: EVENTS.transfer20.topic0 });
        expect(logs.length).toBeGreaterThan(0);
        for (const n of [first + 30, first + 120, s.head()]) {
          let expected = genesis;
          for (const log of logs.filter((l) => l.block_number <= n)) {
            const items = Object.fromEntries(log.items.map((i) => [i.name, i.value]));
            if (items.from === items.to) continue;
            if (items.to === wallet) expected += BigInt(items.value!);
            if (items.from === wallet) expected -= BigInt(items.value!);
          }
          expect(await token(s, contract, wallet, n)).toBe(expected);
        }
      }
    }
  });

  it("no actor's balance goes below zero on a generated chain", async () => {
    const s = await start({ seed: 5, initialBlocks: 400 });
    for (const a of [...s.addresses.wallets, ...s.addresses.contracts]) expect(await kaia(s, a, "latest")).toBeGreaterThanOrEqual(0n);
    for (const t of s.addresses.tokens) for (const w of s.addresses.wallets.slice(0, 5)) expect(await token(s, t, w, "latest")).toBeGreaterThanOrEqual(0n);
  });

  it("chosen records move a fresh address exactly; a failed transaction moves nothing", async () => {
    const s = await start({ seed: 6, initialBlocks: 5 });
    const fresh = "0x00000000000000000000000000000000000f4e5b";
    const [usdt] = s.addresses.tokens.slice(1, 2);
    const from = s.addresses.wallets[3]!;
    const before = s.head();
    expect(await kaia(s, fresh, "latest")).toBe(0n);
    const funded = s.addBlock({
      internalTransactions: [
        { from, to: fresh, amount: "100.000000000000000001" },
        { from, to: fresh, amount: "5", transaction_status: { status: "Fail", fail_message: "nope" }, error: "execution reverted" },
      ],
      eventLogs: [{ contract_address: usdt!, topics: [EVENTS.transfer20.topic0, padAddress(from), padAddress(fresh)], data: WORD(1_500_000n) }],
    });
    const spent = s.addBlock({ internalTransactions: [{ from: fresh, to: from, amount: "0.000000000000000001" }] });
    expect(await kaia(s, fresh, before)).toBe(0n);
    expect(await kaia(s, fresh, funded)).toBe(100n * 10n ** 18n + 1n);
    expect(await kaia(s, fresh, spent)).toBe(100n * 10n ** 18n);
    expect(await token(s, usdt!, fresh, funded)).toBe(1_500_000n);
    expect(s.truth.kaiaBalance(fresh, funded)).toBe(100n * 10n ** 18n + 1n);
    expect(s.truth.tokenBalance(usdt!, fresh, spent)).toBe(1_500_000n);
    expect((await call(s, "eth_getBalance", [fresh, hex(spent + 1)])).error?.message).toBe("header not found");
  });

  it("the same seed gives the same balances", async () => {
    const [a, b] = await Promise.all([start({ seed: 9, initialBlocks: 40 }), start({ seed: 9, initialBlocks: 40 })]);
    const w = a.addresses.busyWallet;
    expect(await kaia(a, w, "latest")).toBe(await kaia(b, w, "latest"));
    expect(await token(a, a.addresses.tokens[1]!, w, "latest")).toBe(await token(b, b.addresses.tokens[1]!, w, "latest"));
  });
});
