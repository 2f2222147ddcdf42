import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createOperationalMonitor } from "../../src/daemon/operational-monitor.js";
import { explorerOptionsOf } from "../../src/daemon/explorer-options.js";
import { paginateSource } from "../../src/daemon/paginate-source.js";
import { createWitnessAudit } from "../../src/daemon/witness-audit.js";
import { createExplorerClient } from "../../src/explorer/client.js";
import type { EventLog, ListResponse } from "../../src/explorer/types.js";
import { alertId } from "../../src/rules/build-alert.js";
import { createSimulator } from "../../src/simulator/index.js";
import { openStore } from "../../src/store/open-store.js";
import { planAudit } from "../../src/watch/audit-plan.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { createSourcePoller } from "../../src/watch/poller.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";

/**
 * The explorer's side of `source: both` on real parts: a poller of a token's event logs reads
 * the simulator, whose explorer never indexed one of them (missingRecords), and writes a
 * witness of every alert it finds. The node's side is written by hand here, as its poller
 * would commit it (every log of the range, the one the explorer lacks included): the audit
 * then reports exactly that record as explorer_missed_record.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("witnesses of an explorer source", () => {
  it("are every alert its windows found; against the node's, the record the explorer never indexed is reported, and only it", async () => {
    const sim = await createSimulator({ seed: 40, initialBlocks: 60 });
    cleanups.push(() => sim.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const start = sim.head() - 30;
    const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, page_size: 2000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: false }
defaults: { jitter: 0s, start: ${start}, max_window_blocks: 10 }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: token-logs, watch: token, notify: [out] }
sinks:
  out: { type: webhook, url: "http://127.0.0.1:9/unused", allow_http: true }
  ops: { type: webhook, url: "http://127.0.0.1:9/unused", allow_http: true, operational: true }
`);
    const [source] = planFromConfig(config).sources;
    if (source === undefined) throw new Error("no source planned");
    // The node's share of the watch, as the planner makes it under `source: both`.
    const plan = planAudit([source, { key: "src_node", definition: { network: source.definition.network, operation: "nodeEventLogs" }, watch: "token", family: "event_logs", members: [{ watch: "token", ownKey: "own_node_token", handover: { skipThrough: -1 } }] }]);

    const head = sim.head();
    const logs = await fetch(`${sim.url}/api/v1/accounts/${sim.addresses.busyToken}/event-logs?blockNumberStart=${start}&blockNumberEnd=${head}&size=2000`).then(async (answer) => ((await answer.json()) as ListResponse<EventLog>).results);
    expect(logs.length).toBeGreaterThan(3);
    const lost = logs[2]!;
    sim.setFaults({ missingRecords: [{ transactionHash: lost.transaction_hash!, logIndex: lost.log_index }] });
    const keyOf = (log: EventLog) => NORMALIZERS.event_logs(log as never).key;

    const common = quietCommon();
    const store = await openStore(common, { path: config.store.path });
    cleanups.push(() => store.close());
    const client = createExplorerClient(common, explorerOptionsOf(config));
    cleanups.push(() => client.close());
    const poller = createSourcePoller(common, { source, store, paginate: paginateSource(client, source.definition, 2000), normalize: NORMALIZERS.event_logs, pageSize: 2000, audit: plan });
    await poller.tick(head, new AbortController().signal);

    const witnessed = await store.listWitnesses({ missed: false });
    expect(witnessed.every((w) => w.role === "explorer" && w.watch === "token" && w.family === "event_logs" && w.rule === "token-logs")).toBe(true);
    expect(new Set(witnessed.map((w) => w.record_key))).toEqual(new Set(logs.filter((log) => log !== lost).map(keyOf)));
    expect(new Set(witnessed.map((w) => w.alert_id))).toEqual(new Set((await store.listOutbox()).map((entry) => entry.alert.id)));

    // The node's windows: every log, under the same ids.
    await store.commitWindow({
      cursor: { key: "own_node_token", watch: "token", source: "event_logs", description: "the node's position of token", block: head, updated_at: new Date(common.now()).toISOString() },
      entries: [],
      witnesses: logs.map((log) => ({ alert_id: alertId("token-logs", keyOf(log)), role: "node" as const, watch: "token", family: "event_logs", rule: "token-logs", block: log.block_number, record_key: keyOf(log), summary: `log ${log.log_index}`, transaction_hash: log.transaction_hash ?? null, seen_at: new Date(common.now()).toISOString() })),
    });
    const monitor = await createOperationalMonitor(common, { store, sinks: ["ops"], network: "simulated", head: () => head, onQueued: () => {} });
    expect(await createWitnessAudit(common, { store, plan, monitor, onQueued: () => {} }).run()).toBe(1);
    const reported = (await store.listOutbox({ sink: "ops" })).map((entry) => entry.alert);
    expect(reported.map((alert) => [alert.labels?.kind, (alert.record as { record_key: string }).record_key, alert.block])).toEqual([["explorer_missed_record", keyOf(lost), lost.block_number]]);
    expect(await store.countWitnesses()).toEqual({ open: 0, missed: { explorer: 0, node: 1 } });
  });
});
