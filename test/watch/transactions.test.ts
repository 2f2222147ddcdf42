import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { functionSelector } from "../../src/chain/signatures.js";
import { planCredits } from "../../src/watch/credit-plan.js";
import { formatPlan } from "../../src/cli/commands/plan.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import type { NodeTransaction } from "../../src/chain/node-transactions.js";

/**
 * The transactions source in process against the simulator's node: one kaia_getBlockReceipts
 * a block serves a hundred account watches (the plan and the block-read metric say so), and
 * each watch's rules see exactly the transactions from, to or paid by its account.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-transactions-");
const wallet = (i: number) => `0x${(0xa000 + i).toString(16).padStart(40, "0")}`;
const word = (hex: string) => hex.replace(/^0x/, "").padStart(64, "0");

beforeAll(async () => {
  sim = await createSimulator({ seed: 7, initialBlocks: 5 });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

describe("transactions source", () => {
  it("reads each block once for a hundred account watches, and filters it to each", async () => {
    const start = sim.head();
    const payer = "0x" + "fe".repeat(20);
    const contract = "0x" + "c0".repeat(20);
    // Block 1: wallet 0 sends 1.5 KAIA to wallet 1; wallet 2 receives one kei from a stranger.
    sim.addBlock({
      transactions: [
        { from: wallet(0), to: wallet(1), value: "1.5" },
        { from: "0x" + "11".repeat(20), to: wallet(2), value: "0.000000000000000001" },
      ],
    });
    sim.mine(3);
    // Fee-delegated by a payer, a failed call with a revert reason, a call by method.
    sim.addBlock({
      transactions: [
        { from: wallet(3), to: wallet(4), value: "2", feePayer: payer, typeInt: 9 },
        { from: wallet(5), to: contract, input: functionSelector("withdraw(uint256)") + word("0x64"), status: "Fail", revertReason: "not enough liquidity" },
        { from: wallet(6), to: contract, input: functionSelector("transfer(address,uint256)") + word(wallet(7)) + word("0x2a"), typeInt: 48 },
      ],
    });
    sim.mine(2);
    const end = sim.head();
    const out = join(dir.path, "out.jsonl");
    const watches = Array.from({ length: 100 }, (_, i) => `  - { name: w${i}, account: "${wallet(i)}", sources: [transactions], methods: ["transfer(address to, uint256 amount)", "withdraw(uint256)"] }`).join("\n");
    const rules = Array.from({ length: 100 }, (_, i) => `  - { name: r${i}, watch: w${i}, source: transactions, notify: [out] }`).join("\n");
    const text = `
explorer: { base_url: ${sim.url} }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0, requests_per_second: 1000 }
store: { path: ${join(dir.path, "store.db")} }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *", start: ${start}, jitter: 0s }
watches:
${watches}
rules:
${rules}
sinks:
  out: { type: file, path: ${out} }
`;
    const config = configFromText(text);

    const plan = planCredits(config, { dayMs: Date.UTC(2026, 0, 5) });
    expect(plan.sources).toHaveLength(0);
    expect(plan.creditsPerDay).toBe(0);
    expect(plan.rpc.transactions).toMatchObject({ watches: expect.any(Array), blockReadsPerDay: 86_400, callsPerDay: 86_400 });
    expect(plan.rpc.transactions?.watches).toHaveLength(100);
    const printed = formatPlan(plan, config, "test.yaml");
    expect(printed).toContain("transactions (*/10 * * * * *): 86,400 block reads a day (kaia_getBlockReceipts, one per block), shared by 100 account watches: 86,400 calls");

    sim.resetStats();
    const common = quietCommon();
    const daemon = await createDaemon(common, { config });
    try {
      expect(daemon.plan.sources).toHaveLength(1);
      const result = await daemon.engine.runOnce();
      expect(result.results.every((r) => r.error === undefined), JSON.stringify(result.results)).toBe(true);
      await daemon.dispatcher.drain({ timeoutMs: 10_000, flushGroups: true });
    } finally {
      await daemon.stop();
    }
    // `start: N` scans from block N on.
    const blocks = end - start + 1;
    expect(sim.stats().rpcMethods.kaia_getBlockReceipts).toBe(blocks);
    const reads = await common.metrics.nodeBlockReads.get();
    expect(reads.values[0]?.value).toBe(blocks);

    const alerts = readJsonLines<AlertDocument>(out);
    const by = (rule: string) => alerts.filter((a) => a.rule === rule).map((a) => a.record as NodeTransaction);
    expect(by("r0")).toMatchObject([{ from: wallet(0), to: wallet(1), value: "1.5", value_kei: "1500000000000000000", status: "Success", type: "TxTypeLegacyTransaction" }]);
    expect(by("r1")).toMatchObject([{ from: wallet(0), value: "1.5" }]);
    expect(by("r2")).toMatchObject([{ to: wallet(2), value: "0.000000000000000001" }]);
    expect(by("r3")).toMatchObject([{ from: wallet(3), fee_payer: payer, type: "TxTypeFeeDelegatedValueTransfer", type_int: 9, value: "2" }]);
    expect(by("r4")).toHaveLength(1);
    expect(by("r5")).toMatchObject([{ status: "Fail", tx_error: "0x9", error: "evm: execution reverted", revert_reason: "not enough liquidity", method: "withdraw", args: [{ name: "arg0", type: "uint256", value: "100" }] }]);
    expect(by("r6")).toMatchObject([{ method: "transfer", method_signature: "transfer(address,uint256)", args: [{ name: "to", value: wallet(7) }, { name: "amount", value: "42" }], type: "TxTypeSmartContractExecution" }]);
    // Wallet 7 is an argument, not a party: its watch sees nothing.
    expect(by("r7")).toEqual([]);
    expect(alerts).toHaveLength(7);
    // Ids from the hash: one per (rule, transaction).
    expect(new Set(alerts.map((a) => a.id)).size).toBe(7);
    const fee = by("r5")[0]!;
    expect(BigInt(fee.gas_used) * BigInt(fee.gas_price)).toBe(BigInt(fee.fee.replace(".", "").replace(/^0+/, "")) * 10n ** BigInt(18 - (fee.fee.split(".")[1]?.length ?? 0)));
  }, 30_000);
});
