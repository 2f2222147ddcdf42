import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import type { AlertDocument } from "../../src/model/alert-document.js";

/**
 * An amount condition means value that moved (issue 41): a reverted send and the frames of a
 * failed transaction (or a frame with an error of its own) match no amount condition, neither
 * a big outflow nor a small one, while `attempted_amount` still reads what they carried. Run
 * through the daemon against the simulator's node and explorer, as a user's rules run.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-moved-value-");
const SENDER = "0x000000000000000000000000000000000000a001";
const RECEIVER = "0x000000000000000000000000000000000000a002";
const CONTRACT = "0x000000000000000000000000000000000000c0c0";
const STRANGER = "0x000000000000000000000000000000000000bb01";
const FAILED_TX = `0x${"f1".repeat(32)}`;
const ERROR_TX = `0x${"e1".repeat(32)}`;
const GOOD_TX = `0x${"a1".repeat(32)}`;

beforeAll(async () => {
  sim = await createSimulator({ seed: 41, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

describe("amount is value that moved", () => {
  it("matches no amount condition for a reverted send or a failed frame; attempted_amount reads them", async () => {
    const start = sim.head() + 1;
    sim.addBlock({
      transactions: [
        { from: SENDER, to: STRANGER, value: "46752.87", status: "Fail", revertReason: "execution reverted" },
        { from: SENDER, to: STRANGER, value: "2000" },
      ],
    });
    sim.addBlock({
      internalTransactions: [
        // A failed transaction: its frames moved nothing, the one without an error of its own included.
        { transaction_hash: FAILED_TX, call_id: 0, from: CONTRACT, to: RECEIVER, amount: "5", error: "execution reverted", transaction_status: { status: "Fail", fail_message: "nope" } },
        { transaction_hash: FAILED_TX, call_id: 1, from: CONTRACT, to: RECEIVER, amount: "7", transaction_status: { status: "Fail", fail_message: "nope" } },
        // A call that reverted inside a successful transaction (a caught failure).
        { transaction_hash: ERROR_TX, call_id: 1, from: CONTRACT, to: RECEIVER, amount: "3", error: "execution reverted", transaction_status: { status: "Success" } },
        { transaction_hash: GOOD_TX, call_id: 0, from: CONTRACT, to: RECEIVER, amount: "2", transaction_status: { status: "Success" } },
      ],
    });
    const out = join(dir.path, "out.jsonl");
    const rule = (name: string, watch: string, source: string, when: string) => `  - { name: ${name}, watch: ${watch}, source: ${source}, notify: [out], when: ${when} }`;
    const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 100000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0, requests_per_second: 100000 }
store: { path: ${join(dir.path, "store.db")} }
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", start: ${start}, jitter: 0s }
watches:
  - { name: sender, account: "${SENDER}", sources: [transactions] }
  - { name: receiver, account: "${RECEIVER}", sources: [internal_transactions] }
rules:
${[
  rule("big-out", "sender", "transactions", '{ direction: out, amount: { gte: "1000 KAIA" } }'),
  rule("small-out", "sender", "transactions", '{ direction: out, amount: { lt: "100000 KAIA" } }'),
  rule("any-out", "sender", "transactions", '{ direction: out, amount: { exists: true } }'),
  rule("failed-out", "sender", "transactions", '{ failed: true, attempted_amount: { gte: "1000 KAIA" } }'),
  rule("big-call", "receiver", "internal_transactions", '{ amount: { gte: "1 KAIA" } }'),
  rule("small-call", "receiver", "internal_transactions", '{ amount: { lt: "1000 KAIA" } }'),
  rule("exact-call", "receiver", "internal_transactions", '{ amount: { in: ["5 KAIA", "7 KAIA", "3 KAIA", "2 KAIA"] } }'),
  rule("failed-call", "receiver", "internal_transactions", '{ failed: true, attempted_amount: { gte: "1 KAIA" } }'),
].join("\n")}
sinks:
  out: { type: file, path: ${out} }
`);
    const daemon = await createDaemon(quietCommon(), { config });
    try {
      const result = await daemon.engine.runOnce();
      expect(result.results.every((r) => r.error === undefined), JSON.stringify(result.results)).toBe(true);
      await daemon.dispatcher.drain({ timeoutMs: 10_000, flushGroups: true });
    } finally {
      await daemon.stop();
    }
    const alerts = readJsonLines<AlertDocument>(out);
    const amounts = (rule: string) => alerts.filter((a) => a.rule === rule).map((a) => (a.record as { value?: string; amount?: string }).value ?? (a.record as { amount?: string }).amount).sort();
    expect(amounts("big-out")).toEqual(["2000"]);
    expect(amounts("small-out")).toEqual(["2000"]);
    expect(amounts("any-out")).toEqual(["2000"]);
    expect(amounts("failed-out")).toEqual(["46752.87"]);
    expect(amounts("big-call")).toEqual(["2"]);
    expect(amounts("small-call")).toEqual(["2"]);
    expect(amounts("exact-call")).toEqual(["2"]);
    expect(amounts("failed-call")).toEqual(["3", "5", "7"]);
  }, 30_000);
});
