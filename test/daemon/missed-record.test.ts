import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import type { EventLog, ListResponse } from "../../src/explorer/types.js";
import { alertId } from "../../src/rules/build-alert.js";
import { createSimulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { waitFor } from "../helpers/wait-for.js";
import type { AlertDocument } from "../../src/model/alert-document.js";

/**
 * Issue 40's "the simulator's explorer drops one record; `both` raises explorer_missed_record
 * for exactly it", end to end: a daemon with a token watch under `source: both` reads the
 * simulator's explorer (which never indexed one of the token's logs) and its node (which
 * emits it). The alert of that log goes out once, from the node; the audit reports that log,
 * and only it, to the operational sink.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("source: both with an explorer that never indexed a record", () => {
  it("delivers its alert once, from the node, and raises explorer_missed_record for exactly it", async () => {
    const sim = await createSimulator({ seed: 41, initialBlocks: 80 });
    cleanups.push(() => sim.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const start = sim.head() - 40;
    const logs = await fetch(`${sim.url}/api/v1/accounts/${sim.addresses.busyToken}/event-logs?blockNumberStart=${start}&blockNumberEnd=${sim.head()}&size=2000`).then(async (answer) => ((await answer.json()) as ListResponse<EventLog>).results);
    const lost = logs[Math.floor(logs.length / 2)]!;
    const lostKey = NORMALIZERS.event_logs(lost as never).key;
    sim.setFaults({ missingRecords: [{ transactionHash: lost.transaction_hash!, logIndex: lost.log_index }] });

    const config = configFromText(`
explorer: { base_url: "${sim.url}", requests_per_second: 100000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, requests_per_second: 100000 }
store: { path: "${join(dir.path, "store.db")}" }
status: { listen: false }
operational: { check_interval: 100ms }
defaults: { schedule: "*/10 * * * * *", start: ${start}, jitter: 0s, source: both }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: token-logs, watch: token, notify: [out] }
sinks:
  out: { type: file, path: "${join(dir.path, "out.jsonl")}" }
  ops: { type: file, path: "${join(dir.path, "ops.jsonl")}", operational: true }
`);
    const daemon = await createDaemon(quietCommon(), { config });
    cleanups.push(() => daemon.stop());
    expect(new Set(daemon.plan.sources.map((source) => source.definition.operation))).toEqual(new Set(["accountEventLogs", "nodeEventLogs"]));
    const { scan } = await daemon.runOnce({ drainTimeoutMs: 20_000 });
    expect(scan.results.filter((result) => result.error !== undefined)).toEqual([]);
    const delivered = readJsonLines<AlertDocument>(join(dir.path, "out.jsonl")).map((alert) => alert.id);
    expect(delivered.filter((id) => id === alertId("token-logs", lostKey))).toHaveLength(1);
    expect(new Set(delivered).size).toBe(delivered.length);

    // The health loop audits after each check: every witness is paired or reported.
    await daemon.start();
    await waitFor(async () => (await daemon.store.countWitnesses()).open === 0, 20_000, "every witness of the token watch paired or reported");
    await waitFor(() => readJsonLines(join(dir.path, "ops.jsonl")).length > 0, 20_000, "the operational alert delivered");
    const reported = readJsonLines<AlertDocument>(join(dir.path, "ops.jsonl"));
    expect(reported.map((alert) => [alert.labels?.kind, (alert.record as { record_key: string }).record_key, alert.block, alert.transaction_hash])).toEqual([["explorer_missed_record", lostKey, lost.block_number, lost.transaction_hash]]);
    expect(await daemon.store.countWitnesses()).toEqual({ open: 0, missed: { explorer: 0, node: 1 } });
  }, 60_000);
});
