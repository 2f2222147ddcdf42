import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Common } from "../../src/common/common.js";
import { createOperationalMonitor } from "../../src/daemon/operational-monitor.js";
import { createWitnessAudit } from "../../src/daemon/witness-audit.js";
import { openStore } from "../../src/store/open-store.js";
import type { Witness, WitnessRole } from "../../src/store/types.js";
import { planAudit } from "../../src/watch/audit-plan.js";
import type { SourceOperation } from "../../src/watch/source.js";
import { quietCommon, tempDir } from "../helpers/harness.js";
import { sample } from "../helpers/metric-sample.js";

/**
 * The audit of `source: both` watches on hand-made commits: what each reader's windows
 * witnessed, and where each reader is, as the pollers would have written them. The watch
 * `treasury` is read by two explorer sources (two events) and by its share of a node source,
 * whose position is kept under the watch's own key.
 */
const NODE_OPERATION: SourceOperation = "nodeEventLogs";
const PLAN = planAudit([
  { key: "src_e1", definition: { network: "kairos", operation: "accountEventLogs" }, watch: "treasury", family: "event_logs", members: [{ watch: "treasury", ownKey: "src_e1", handover: { skipThrough: -1 } }] },
  { key: "src_e2", definition: { network: "kairos", operation: "accountEventLogs" }, watch: "treasury", family: "event_logs", members: [{ watch: "treasury", ownKey: "src_e2", handover: { skipThrough: -1 } }] },
  // Internal transactions only from the explorer: not audited.
  { key: "src_calls", definition: { network: "kairos", operation: "accountInternalTransactions" }, watch: "treasury", family: "internal_transactions", members: [{ watch: "treasury", ownKey: "src_calls", handover: { skipThrough: -1 } }] },
  { key: "src_node", definition: { network: "kairos", operation: NODE_OPERATION }, watch: "treasury", family: "event_logs", members: [{ watch: "treasury", ownKey: "own_node_treasury", handover: { skipThrough: -1 } }] },
]);
const EXPLORER = ["src_e1", "src_e2"];
const NODE = "own_node_treasury";
const T = "2026-01-01T00:00:00.000Z";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function witness(alertId: string, role: WitnessRole, block: number, options: { family?: string; rule?: string; recordKey?: string } = {}): Witness {
  return {
    alert_id: alertId,
    role,
    watch: "treasury",
    family: options.family ?? "event_logs",
    rule: options.rule ?? "big-transfer",
    block,
    record_key: options.recordKey ?? `0x${"cd".repeat(32)}:${block}:0`,
    summary: `Transfer of 5,000 USDT at block ${block}`,
    transaction_hash: `0x${"cd".repeat(32)}`,
    seen_at: T,
  };
}

async function world(path?: string) {
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  // Each world is a process of its own: its own metrics and operational monitor.
  const common: Common = quietCommon();
  const store = await openStore(common, { path: path ?? join(dir.path, "store.json") });
  cleanups.push(() => store.close().catch(() => undefined));
  const monitor = await createOperationalMonitor(common, { store, sinks: ["ops"], network: "kairos", head: () => 1000, onQueued: () => {} });
  let kicks = 0;
  const audit = createWitnessAudit(common, { store, plan: PLAN, monitor, onQueued: () => void (kicks += 1) });
  const commit = (key: string, block: number, witnesses: Witness[] = []) =>
    store.commitWindow({ cursor: { key, watch: "treasury", source: "event_logs", description: key, block, updated_at: T }, entries: [], witnesses });
  const explorerAt = async (block: number, witnesses: Witness[] = []) => {
    await commit("src_e1", block, witnesses);
    await commit("src_e2", block);
  };
  const missedCount = async (source: string) => sample(await common.metrics.registry.metrics(), "kaiawatch_missed_records_total", { source }) ?? 0;
  const operational = async () => (await store.listOutbox({ sink: "ops" })).map((entry) => entry.alert);
  return { common, store, audit, commit, explorerAt, missedCount, operational, kicks: () => kicks };
}

describe("the audit of source: both watches", () => {
  it("reports a record the node showed and the explorer passed without, once, with its key and summary, counted", async () => {
    const w = await world();
    await w.commit(NODE, 12, [witness("kw_a", "node", 10)]);
    await w.explorerAt(9);
    // The explorer has not read block 10 yet: nothing to say.
    expect(await w.audit.run()).toBe(0);
    expect(await w.operational()).toEqual([]);

    await w.explorerAt(12);
    expect(await w.audit.run()).toBe(1);
    const [alert, ...more] = await w.operational();
    expect(more).toEqual([]);
    expect(alert?.summary).toBe("kaiawatch: the explorer did not return a record the node showed at block 10, though it has read watch treasury up to block 12: Transfer of 5,000 USDT at block 10");
    expect(alert?.labels).toMatchObject({ kind: "explorer_missed_record", watch: "treasury" });
    expect(alert?.block).toBe(10);
    expect(alert?.record).toMatchObject({ kind: "explorer_missed_record", record_key: `0x${"cd".repeat(32)}:10:0`, record_summary: "Transfer of 5,000 USDT at block 10", alert_ids: ["kw_a"], rules: ["big-transfer"], seen_by: "node", missed_by: "explorer", position: 12 });
    expect(w.kicks()).toBe(1);
    expect(await w.missedCount("explorer")).toBe(1);
    expect(await w.store.countWitnesses()).toEqual({ open: 0, missed: { explorer: 0, node: 1 } });

    // Later passes, and the explorer going further: the record was reported.
    await w.explorerAt(20);
    expect(await w.audit.run()).toBe(0);
    expect(await w.operational()).toHaveLength(1);
    expect(await w.missedCount("explorer")).toBe(1);
  });

  it("reports a record the explorer showed and the node passed without as node_missed_record", async () => {
    const w = await world();
    await w.explorerAt(15, [witness("kw_b", "explorer", 14)]);
    await w.commit(NODE, 13);
    expect(await w.audit.run()).toBe(0);
    await w.commit(NODE, 14);
    expect(await w.audit.run()).toBe(1);
    expect((await w.operational()).map((alert) => alert.labels?.kind)).toEqual(["node_missed_record"]);
    expect(await w.missedCount("node")).toBe(1);
  });

  it("says nothing of a record both readers showed, and keeps no row of it", async () => {
    const w = await world();
    await w.commit(NODE, 12, [witness("kw_c", "node", 10)]);
    await w.explorerAt(12, [witness("kw_c", "explorer", 10)]);
    expect(await w.store.listWitnesses({ missed: false })).toEqual([]);
    expect(await w.audit.run()).toBe(0);
    expect(await w.operational()).toEqual([]);
  });

  it("waits while any explorer source of the watch is behind the block: the record may be the other event's", async () => {
    const w = await world();
    await w.commit(NODE, 12, [witness("kw_d", "node", 10)]);
    await w.commit("src_e1", 30);
    await w.commit("src_e2", 9);
    expect(await w.audit.run()).toBe(0);
    await w.commit("src_e2", 10, [witness("kw_d", "explorer", 10)]);
    expect(await w.audit.run()).toBe(0);
    expect(await w.store.countWitnesses()).toEqual({ open: 0, missed: { explorer: 0, node: 0 } });
  });

  it("waits for a reader that has no position for the watch yet, and does not audit a family only one reader serves", async () => {
    const w = await world();
    await w.explorerAt(20, [witness("kw_e", "explorer", 5), witness("kw_f", "explorer", 6, { family: "internal_transactions" })]);
    expect(await w.audit.run()).toBe(0);
    await w.commit(NODE, 20);
    expect(await w.audit.run()).toBe(1);
    expect((await w.operational()).map((alert) => (alert.record as { alert_ids: string[] }).alert_ids)).toEqual([["kw_e"]]);
  });

  it("reports a record two rules matched once", async () => {
    const w = await world();
    const key = `0x${"ef".repeat(32)}:8:1`;
    await w.commit(NODE, 9, [witness("kw_g1", "node", 8, { rule: "big-transfer", recordKey: key }), witness("kw_g2", "node", 8, { rule: "any-transfer", recordKey: key })]);
    await w.explorerAt(9);
    expect(await w.audit.run()).toBe(1);
    const alerts = await w.operational();
    expect(alerts.map((alert) => (alert.record as { rules: string[] }).rules)).toEqual([["big-transfer", "any-transfer"]]);
    expect(await w.store.countWitnesses()).toEqual({ open: 0, missed: { explorer: 0, node: 2 } });
  });

  it("holds across a restart: what one run witnessed, the next run's audit reports, once", async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const path = join(dir.path, "store.json");
    const first = await world(path);
    await first.commit(NODE, 12, [witness("kw_h", "node", 11)]);
    await first.store.close();

    // A new process: nothing in memory, the explorer goes past the block.
    const second = await world(path);
    await second.explorerAt(12);
    expect(await second.audit.run()).toBe(1);
    await second.store.close();

    const third = await world(path);
    expect(await third.audit.run()).toBe(0);
    expect((await third.operational()).map((alert) => alert.labels?.kind)).toEqual(["explorer_missed_record"]);
  });
});

describe("planAudit", () => {
  it("audits a (watch, family) that an explorer source and a node source both serve, or only the watches named", () => {
    expect(PLAN.size).toBe(1);
    expect(PLAN.audits("treasury", "event_logs")).toBe(true);
    expect(PLAN.audits("treasury", "internal_transactions")).toBe(false);
    expect(PLAN.positionKeys("treasury", "event_logs", "explorer")).toEqual(EXPLORER);
    expect(PLAN.positionKeys("treasury", "event_logs", "node")).toEqual([NODE]);
    const sources = [
      { key: "src_e1", definition: { network: "kairos", operation: "accountEventLogs" as const }, watch: "treasury", family: "event_logs" as const },
      { key: "src_node", definition: { network: "kairos", operation: NODE_OPERATION }, watch: "treasury", family: "event_logs" as const },
    ];
    expect(planAudit(sources).positionKeys("treasury", "event_logs", "node")).toEqual(["src_node"]);
    expect(planAudit(sources, new Set(["other"])).size).toBe(0);
  });
});
