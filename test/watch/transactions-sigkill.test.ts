import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { functionSelector } from "../../src/chain/signatures.js";
import type { NodeTransaction } from "../../src/chain/node-transactions.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { readJsonLines, tempDir } from "../helpers/harness.js";
import { startKaiawatch, waitFor } from "../helpers/child.js";

/**
 * A hot wallet's top-level transactions end to end with real processes: plain sends and
 * receipts, a failed transaction with its revert reason, a fee-delegated one (sender and
 * fee payer) and a contract call by method, placed in the chain between SIGKILLs of
 * `kaiawatch run` while the chain grows; `kaiawatch once` finishes. Each is alerted under
 * one id (from its hash), with the exact amount.
 */
const KILLS = 2;
let sim: Simulator;
const dir = tempDir("kaiawatch-tx-sigkill-");
const hot = "0x" + "ab".repeat(20);
const friend = "0x" + "cd".repeat(20);
const payer = "0x" + "fe".repeat(20);
const vault = "0x" + "c0".repeat(20);
const word = (hex: string) => hex.replace(/^0x/, "").padStart(64, "0");

beforeAll(async () => {
  sim = await createSimulator({ seed: 28, initialBlocks: 20, blockTime: 50 });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

describe("transactions source through SIGKILL", () => {
  it("alerts each transaction of the wallet once per rule, with the exact amount", async () => {
    const start = sim.head() - 10;
    const out = join(dir.path, "alerts.jsonl");
    const configPath = join(dir.path, "config.yaml");
    writeFileSync(
      configPath,
      `
explorer: { base_url: "${sim.url}" }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, requests_per_second: 500 }
store: { path: "${join(dir.path, "store.db")}" }
status: { listen: false }
defaults: { schedule: "* * * * * *", start: ${start}, jitter: 0s }
watches:
  - name: hot
    account: "${hot}"
    sources: [transactions]
    methods: ["withdraw(uint256 amount)"]
rules:
  - { name: sent, watch: hot, source: transactions, when: { direction: out, amount: { gt: "0 KAIA" } }, notify: [out] }
  - { name: received, watch: hot, source: transactions, when: { direction: in }, notify: [out] }
  - { name: failed, watch: hot, source: transactions, when: { status: Fail }, notify: [out] }
  - { name: sponsored, watch: hot, source: transactions, when: { fee_delegated: true }, notify: [out] }
  - { name: withdrawals, watch: hot, source: transactions, when: { method: withdraw }, notify: [out] }
sinks:
  out: { type: file, path: "${out}" }
`,
    );
    // One transaction of each kind goes into the chain before each run, so that every run
    // (and every kill) has some to alert.
    const batches = [
      () => sim.addBlock({ transactions: [{ from: hot, to: friend, value: "1234.000000000000000001" }, { from: friend, to: "0x" + "99".repeat(20), value: "5" }] }),
      () => sim.addBlock({ transactions: [{ from: friend, to: hot, value: "0.5" }] }),
      () => sim.addBlock({ transactions: [{ from: hot, to: vault, input: functionSelector("withdraw(uint256)") + word("0x3e8"), status: "Fail", revertReason: "cooldown not over" }] }),
      () => sim.addBlock({ transactions: [{ from: hot, to: friend, value: "7.25", feePayer: payer, typeInt: 10, feeRatio: 40 }] }),
      () => sim.addBlock({ transactions: [{ from: hot, to: vault, input: functionSelector("withdraw(uint256)") + word("0x0de0b6b3a7640000"), typeInt: 48 }] }),
    ];
    let next = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      batches[next++]?.();
      const before = readJsonLines(out).length;
      const child = startKaiawatch(["run", "--config", configPath, "--log-level", "warn", "--log-format", "json"]);
      // Killed once this run has delivered something (its batch, at least): in the middle of its work, not before it.
      await waitFor(() => readJsonLines(out).length > before, 20_000, `run ${kill} to deliver`);
      child.process.kill("SIGKILL");
      const { signal } = await child.exited;
      expect(signal, child.stderr()).toBe("SIGKILL");
    }
    while (next < batches.length) batches[next++]?.();
    const finish = startKaiawatch(["once", "--config", configPath, "--drain-timeout", "1m", "--log-level", "warn", "--log-format", "json"]);
    const { code } = await finish.exited;
    expect(code, finish.stderr()).toBe(0);

    const alerts = readJsonLines<AlertDocument>(out);
    const idsByRecord = new Map<string, Set<string>>();
    for (const alert of alerts) {
      const key = `${alert.rule}|${alert.transaction_hash}`;
      idsByRecord.set(key, (idsByRecord.get(key) ?? new Set()).add(alert.id));
    }
    expect([...idsByRecord.values()].filter((ids) => ids.size > 1)).toEqual([]);
    const once = (rule: string) => {
      const records = new Map(alerts.filter((a) => a.rule === rule).map((a) => [a.transaction_hash, a.record as NodeTransaction]));
      return [...records.values()];
    };
    expect(once("sent").map((t) => t.value).sort()).toEqual(["1234.000000000000000001", "7.25"]);
    expect(once("received")).toMatchObject([{ from: friend, to: hot, value: "0.5", value_kei: "500000000000000000" }]);
    expect(once("failed")).toMatchObject([{ status: "Fail", error: "evm: execution reverted", revert_reason: "cooldown not over", method: "withdraw", args: [{ name: "amount", value: "1000" }] }]);
    expect(once("sponsored")).toMatchObject([{ from: hot, fee_payer: payer, fee_ratio: 40, type: "TxTypeFeeDelegatedValueTransferWithRatio", value: "7.25" }]);
    expect(once("withdrawals").map((t) => t.status).sort()).toEqual(["Fail", "Success"]);
    expect(once("withdrawals").find((t) => t.status === "Success")).toMatchObject({ method: "withdraw", args: [{ name: "amount", value: "1000000000000000000" }], value: "0" });
    const sentSummary = alerts.find((a) => a.rule === "sent" && (a.record as NodeTransaction).value === "1234.000000000000000001")?.summary;
    expect(sentSummary).toContain("1,234.000000000000000001 KAIA out");
    console.log(`transactions sigkill: ${KILLS} kills, ${idsByRecord.size} (rule, transaction) pairs, ${alerts.length} deliveries`);
  }, 90_000);
});
