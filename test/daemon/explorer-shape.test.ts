import { afterEach, describe, expect, it } from "vitest";
import { createMetrics } from "../../src/common/metrics.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { metricValue } from "../explorer/simulator-support.js";
import { operationalWorld } from "../helpers/operational-world.js";

/**
 * The explorer's answers change shape under a running daemon: a server release drops a field
 * kaiawatch reads (the simulator's `dropField`). The windows fail and the cursor stays (no
 * gap); `explorer_shape_changed` fires once, naming the operation, the field and a sample,
 * and is counted in a metric; when the answers can be read again the source catches up and
 * every record of the failed windows is alerted, and the condition resolves once.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const kindOf = (alert: AlertDocument) => (alert.record as { kind: string }).kind;

describe("a field kaiawatch reads disappears from the explorer's answers", () => {
  it("fails the window, keeps the cursor, raises explorer_shape_changed once, and catches up when it is back", async () => {
    const w = await operationalWorld({ cleanups });
    const metrics = createMetrics();
    const daemon = await w.start({ common: { metrics } });
    await w.round(daemon);
    const source = daemon.plan.sources[0]!;
    const cursorOf = async () => (await daemon.store.getCursor(source.key))?.block;
    const before = await cursorOf();
    expect(before).toBe(w.sim.head());
    const outBefore = w.receiver.requests.filter((r) => r.url === "/out").length;

    w.sim.setFaults({ dropField: "topics" });
    for (let i = 0; i < 3; i++) await w.round(daemon, { mine: 2 });
    expect(await cursorOf()).toBe(before);
    const fired = w.received().filter((a) => kindOf(a) === "explorer_shape_changed");
    expect(fired).toHaveLength(1);
    expect(fired[0]!.status).toBe("firing");
    expect(fired[0]!.summary).toContain("accountEventLogs");
    expect(fired[0]!.summary).toContain("results[].topics");
    expect(fired[0]!.summary).toContain("required field is missing");
    expect(await metricValue(metrics.explorerShapeErrors, { operation: "accountEventLogs", field: "results[].topics" })).toBeGreaterThanOrEqual(3);
    // No alert of the failed windows went out.
    expect(w.receiver.requests.filter((r) => r.url === "/out").length).toBe(outBefore);

    w.sim.setFaults({ dropField: undefined });
    await w.round(daemon);
    expect(await cursorOf()).toBe(w.sim.head());
    const expected = w.sim.truth.accountEventLogs(w.sim.addresses.busyToken, { from: (before as number) + 1, to: w.sim.head() }).length;
    expect(expected).toBeGreaterThan(0);
    expect(w.receiver.requests.filter((r) => r.url === "/out").length - outBefore).toBe(expected);
    const shape = w.received().filter((a) => kindOf(a) === "explorer_shape_changed");
    expect(shape.map((a) => a.status)).toEqual(["firing", "resolved"]);
    expect(shape[1]!.id).toBe(`${shape[0]!.id}:resolved`);
  });
});

describe("an explorer that has not indexed the whole window", () => {
  it("is read from the served range it states: the cursor stops where the explorer stopped, and nothing is skipped", async () => {
    // The explorer indexes 3 blocks behind the node; the config trusts it to the head (lag_blocks: 0).
    const w = await operationalWorld({ cleanups, simulator: { indexingLagBlocks: 3 }, daemon: { recount: { retries: 1, baseMs: 1, maxMs: 1 } } });
    const daemon = await w.start();
    await w.round(daemon);
    const source = daemon.plan.sources[0]!;
    const cursorOf = async () => (await daemon.store.getCursor(source.key))?.block;
    const start = await cursorOf();
    await w.round(daemon, { mine: 5 });
    // The window [start+1, head] was answered up to head-3 only: not committed.
    expect(await cursorOf()).toBe(start);
    expect(w.received().filter((a) => (a.record as { kind: string }).kind === "explorer_behind_head")).toHaveLength(1);

    w.sim.setFaults({ indexingLagBlocks: 0 });
    await w.round(daemon);
    expect(await cursorOf()).toBe(w.sim.head());
    const expected = w.sim.truth.accountEventLogs(w.sim.addresses.busyToken, { from: (start as number) + 1, to: w.sim.head() }).length;
    const delivered = w.receiver.requests.filter((r) => r.url === "/out").map((r) => (JSON.parse(r.body) as AlertDocument).block);
    expect(delivered.filter((block) => block > (start as number))).toHaveLength(expected);
  });
});
