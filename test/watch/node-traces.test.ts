import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { alertId } from "../../src/rules/build-alert.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import type { InternalTransactionListItem } from "../../src/explorer/types.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * Internal transactions from the node's traces (chain.traces): an every_block watch and an
 * account watch read through the explorer (operations 8 and 7), through the node (one
 * debug_traceBlockByNumber a block for both) and through both make the same alerts under the
 * same ids; a node that does not trace fails the source with its code, and under `both` the
 * explorer carries it; a call the explorer never indexed is reported for exactly it.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-node-traces-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 43, initialBlocks: 60, plan: "PRO_PLUS" });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

let runs = 0;
function configText(source: "explorer" | "node" | "both", start: number, extra = ""): { text: string; out: string; ops: string } {
  const name = `run-${runs++}`;
  const out = join(dir.path, `${name}.jsonl`);
  const ops = join(dir.path, `${name}-ops.jsonl`);
  const text = `
explorer: { base_url: "${sim.url}", requests_per_second: 100000, api_plan: PRO_PLUS }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, requests_per_second: 100000, traces: true }
store: { path: "${join(dir.path, `${name}.db`)}" }
status: { listen: false }
operational: { check_interval: 100ms }
defaults: { schedule: "*/10 * * * * *", start: ${start}, jitter: 0s, source: ${source} }
watches:
  - { name: blocks, every_block: true }
  # Its own operation 7 from the explorer (not operation 8 shared with blocks): the node's filter against the explorer's.
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [internal_transactions], via: own }
rules:
  - { name: failed-calls, watch: blocks, when: { failed: true }, notify: [out] }
  - { name: moving-calls, watch: blocks, when: { amount: { gt: "0 KAIA" } }, notify: [out] }
  - { name: wallet-calls, watch: wallet, source: internal_transactions, notify: [out] }
sinks:
  out: { type: file, path: "${out}" }
  ops: { type: file, path: "${ops}", operational: true }
${extra}`;
  return { text, out, ops };
}

/** One pass over the blocks from `start` to the head; the ids it queued (rule and alert id). */
async function queuedIds(source: "explorer" | "node" | "both", start: number): Promise<{ ids: string[]; operations: string[]; failed: string[] }> {
  const daemon = await createDaemon(quietCommon(), { config: configFromText(configText(source, start).text) });
  try {
    const { results } = await daemon.engine.runOnce();
    const ids = (await daemon.store.listOutbox()).map((e) => `${e.rule} ${e.alert.id}`).sort();
    return { ids, operations: [...new Set(daemon.plan.sources.map((s) => s.definition.operation))].sort(), failed: results.flatMap((r) => (r.error === undefined ? [] : [r.error])) };
  } finally {
    await daemon.stop();
  }
}

describe("internal transactions from the node's traces", () => {
  it("the explorer, the node and both: the same alerts under the same ids, the node at one trace a block for every watch", async () => {
    const start = sim.head() - 40;
    const explorer = await queuedIds("explorer", start);
    sim.resetStats();
    const node = await queuedIds("node", start);
    const traced = sim.stats().rpcMethods.debug_traceBlockByNumber ?? 0;
    const both = await queuedIds("both", start);
    expect(explorer.operations).toEqual(["accountInternalTransactions", "blockInternalTransactions"]);
    expect(node.operations).toEqual(["nodeInternalTransactions"]);
    expect(both.operations).toEqual(["accountInternalTransactions", "blockInternalTransactions", "nodeInternalTransactions"]);
    for (const run of [explorer, node, both]) expect(run.failed).toEqual([]);
    for (const rule of ["failed-calls", "moving-calls", "wallet-calls"]) expect(explorer.ids.some((id) => id.startsWith(`${rule} `)), rule).toBe(true);
    expect(node.ids).toEqual(explorer.ids);
    expect(both.ids).toEqual(explorer.ids);
    // The two watches share each block's one trace: 41 blocks, 41 traces (the head may have grown by none).
    expect(traced).toBe(41);
  });

  it("a node that does not trace: the node's source fails with KW_RPC_TRACES_UNAVAILABLE and keeps its cursor; under both the explorer carries the watches", async () => {
    const start = sim.head() - 20;
    sim.setFaults({ debugUnavailable: true });
    try {
      const node = await createDaemon(quietCommon(), { config: configFromText(configText("node", start).text) });
      try {
        const { results } = await node.engine.runOnce();
        const traces = node.plan.sources.find((s) => s.definition.operation === "nodeInternalTransactions");
        expect(results.find((r) => r.key === traces?.key)?.error).toMatch(/^KW_RPC_TRACES_UNAVAILABLE: .* does not serve debug_traceBlockByNumber .*\(chain\.traces: false\)$/);
        expect(await node.store.getCursor(traces?.key ?? "")).toMatchObject({ block: start - 1 });
        expect(await node.store.listOutbox()).toEqual([]);
      } finally {
        await node.stop();
      }
      const reference = await queuedIds("explorer", start);
      const both = await queuedIds("both", start);
      expect(both.failed).toHaveLength(1);
      expect(both.failed[0]).toContain("does not serve debug_traceBlockByNumber");
      expect(both.ids).toEqual(reference.ids);
    } finally {
      sim.setFaults({ debugUnavailable: false });
    }
  });

  it("both, with a call the explorer never indexed: its alert once, from the node, and explorer_missed_record for exactly it", async () => {
    const start = sim.head() - 30;
    const answer = await fetch(`${sim.url}/api/v1/accounts/${sim.addresses.busyWallet}/internal-transactions?blockNumberStart=${start}&blockNumberEnd=${sim.head()}&size=2000`);
    const calls = ((await answer.json()) as { results: InternalTransactionListItem[] }).results;
    const lost = calls[Math.floor(calls.length / 2)] as InternalTransactionListItem;
    const lostKey = NORMALIZERS.internal_transactions(lost as never).key;
    sim.setFaults({ missingRecords: [{ transactionHash: lost.transaction_hash as string, callId: lost.call_id }] });
    try {
      const { text, out, ops } = configText("both", start);
      const daemon = await createDaemon(quietCommon(), { config: configFromText(text) });
      try {
        const { scan } = await daemon.runOnce({ drainTimeoutMs: 20_000 });
        expect(scan.results.filter((result) => result.error !== undefined)).toEqual([]);
        const delivered = readJsonLines<AlertDocument>(out).map((alert) => alert.id);
        expect(delivered.filter((id) => id === alertId("wallet-calls", lostKey))).toHaveLength(1);
        expect(new Set(delivered).size).toBe(delivered.length);
        await daemon.start();
        await waitFor(async () => (await daemon.store.countWitnesses()).open === 0, 20_000, "every witness paired or reported");
        await waitFor(() => readJsonLines(ops).length > 0, 20_000, "the operational alert delivered");
        // One record, reported once, whichever rules matched it (each of their alerts is in its detail).
        const reported = readJsonLines<AlertDocument>(ops);
        expect(reported.map((alert) => [alert.labels?.kind, (alert.record as { record_key: string }).record_key, alert.block])).toEqual([["explorer_missed_record", lostKey, lost.block_id]]);
      } finally {
        await daemon.stop();
      }
    } finally {
      sim.setFaults({ missingRecords: undefined });
    }
  }, 60_000);
});
