import { describe, expect, it } from "vitest";
import type { OperationalConfig } from "../../src/config/types.js";
import { createBacklogTracker, createHeadTracker } from "../../src/daemon/operational-checks.js";

const thresholds: OperationalConfig = { check_interval: 5_000, source_failing_after: 120_000, sink_pending_age: 600_000, sink_backlog_window: 120_000, sink_backlog_growth: 50, head_stuck_after: 120_000, source_behind_blocks: 1000 };
const T0 = Date.UTC(2030, 0, 1);
const at = (ms: number) => new Date(T0 + ms).toISOString();
const kinds = (conditions: Array<{ kind: string }>) => conditions.map((c) => c.kind);

/** The head's conditions, on a clock the test drives. */
describe("head conditions", () => {
  it("a head 740 blocks below the cursors is backwards until it is back", () => {
    const head = createHeadTracker(thresholds, T0);
    expect(kinds(head.observe({ block: 1000, read_at: at(0), error: null }, 1000, T0))).toEqual([]);
    // The explorer/RPC restarted lower: the cursors stay at 1000.
    const behind = head.observe({ block: 260, read_at: at(1000), error: null }, 1000, T0 + 1000);
    expect(kinds(behind)).toEqual(["head_backwards"]);
    expect(behind[0]!.summary).toContain("740 blocks below");
    expect(kinds(head.observe({ block: 900, read_at: at(2000), error: null }, 1000, T0 + 2000))).toEqual(["head_backwards"]);
    expect(kinds(head.observe({ block: 1001, read_at: at(3000), error: null }, 1000, T0 + 3000))).toEqual([]);
  });

  it("a head that does not move for head_stuck_after is stuck, and moves again", () => {
    const head = createHeadTracker(thresholds, T0);
    head.observe({ block: 5, read_at: at(0), error: null }, null, T0);
    expect(kinds(head.observe({ block: 5, read_at: at(119_000), error: null }, null, T0 + 119_000))).toEqual([]);
    expect(kinds(head.observe({ block: 5, read_at: at(120_000), error: null }, null, T0 + 120_000))).toEqual(["head_stuck"]);
    expect(kinds(head.observe({ block: 6, read_at: at(121_000), error: null }, null, T0 + 121_000))).toEqual([]);
  });

  it("failed head reads are unreachable only after source_failing_after; one good read ends it", () => {
    const head = createHeadTracker(thresholds, T0);
    head.observe({ block: 5, read_at: at(0), error: null }, null, T0);
    expect(kinds(head.observe({ block: 5, read_at: at(1000), error: "ECONNREFUSED" }, null, T0 + 1000))).toEqual([]);
    expect(kinds(head.observe({ block: 5, read_at: at(100_000), error: "ECONNREFUSED" }, null, T0 + 100_000))).toEqual([]);
    expect(kinds(head.observe({ block: 5, read_at: at(121_000), error: "ECONNREFUSED" }, null, T0 + 121_000))).toEqual(["head_unreachable"]);
    expect(kinds(head.observe({ block: 7, read_at: at(122_000), error: null }, null, T0 + 122_000))).toEqual([]);
  });

  it("a backlog grown by sink_backlog_growth over sink_backlog_window grows until it no longer does", () => {
    const backlog = createBacklogTracker(thresholds);
    const at = (ms: number, pending: number) => kinds(backlog.observe([{ name: "slack", pending }], T0 + ms));
    expect(at(0, 124)).toEqual([]);
    // 72 more within 45 s: not a verdict yet, the window is not covered.
    expect(at(45_000, 196)).toEqual([]);
    expect(at(119_000, 170)).toEqual([]);
    // A window on: +49 is not growth enough, +56 is.
    expect(at(120_000, 173)).toEqual([]);
    expect(at(130_000, 230)).toEqual(["sink_backlog_growing"]);
    // Still higher than a window ago (196 at 45 s): growing, though by less than the threshold.
    expect(at(165_000, 200)).toEqual(["sink_backlog_growing"]);
    // No higher than a window ago (the baseline: the newest sample at least a window old, 230 at 130 s): it ends.
    expect(at(250_000, 150)).toEqual([]);
    expect(at(260_000, 180)).toEqual([]);
    // Nothing pending ends it at once, window or not.
    const seeded = createBacklogTracker(thresholds);
    seeded.seedGrowing("slack");
    expect(kinds(seeded.observe([{ name: "slack", pending: 10 }], T0))).toEqual(["sink_backlog_growing"]);
    expect(kinds(seeded.observe([{ name: "slack", pending: 0 }], T0 + 1000))).toEqual([]);
  });
});
