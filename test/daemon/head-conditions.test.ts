import { describe, expect, it } from "vitest";
import type { OperationalConfig } from "../../src/config/types.js";
import { createHeadTracker } from "../../src/daemon/operational-checks.js";

const thresholds: OperationalConfig = { check_interval: 5_000, source_failing_after: 120_000, sink_pending_age: 600_000, head_stuck_after: 120_000, source_behind_blocks: 1000 };
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
});
