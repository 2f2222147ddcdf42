import { describe, expect, it } from "vitest";
import { createHeadTracker } from "../../src/daemon/operational-checks.js";
import { configFromText } from "../helpers/harness.js";

/**
 * Head readings observed out of order (issue 29, item 5): an evaluation that waited on a
 * stalled store observed the head it had read before the wait after a later evaluation had
 * observed a newer head, and the head seemed to go backwards: `head_backwards` fired, and
 * resolved at the next check (two false pairs after a PostgreSQL stall). A reading older than
 * the newest one observed is discarded.
 */
const thresholds = configFromText(`
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9" }
watches: [{ name: w, contract: "0x7000000000000000000000000000000000000001" }]
rules: [{ name: r, watch: w, notify: [out] }]
sinks: { out: { type: console } }
`).operational;

const at = (ms: number) => new Date(ms).toISOString();

describe("the head tracker and readings out of order", () => {
  it("discards a reading older than the newest one observed", () => {
    const start = Date.UTC(2026, 0, 1);
    const tracker = createHeadTracker(thresholds, start);
    expect(tracker.observe({ block: 100, read_at: at(start + 1_000), error: null }, 90, start + 1_000)).toEqual([]);
    // The newer reading first, then the stale one (read before it, observed after it).
    expect(tracker.observe({ block: 145, read_at: at(start + 46_000), error: null }, 140, start + 46_000)).toEqual([]);
    expect(tracker.observe({ block: 101, read_at: at(start + 2_000), error: null }, 140, start + 46_100)).toEqual([]);
    expect(tracker.observe({ block: 146, read_at: at(start + 47_000), error: null }, 140, start + 47_000)).toEqual([]);
  });

  it("still sees a head that really went backwards (a newer reading below the highest)", () => {
    const start = Date.UTC(2026, 0, 1);
    const tracker = createHeadTracker(thresholds, start);
    tracker.observe({ block: 145, read_at: at(start + 1_000), error: null }, 140, start + 1_000);
    const conditions = tracker.observe({ block: 50, read_at: at(start + 2_000), error: null }, 140, start + 2_000);
    expect(conditions.map((condition) => condition.kind)).toEqual(["head_backwards"]);
  });
});
