import { describe, expect, it } from "vitest";
import type { SourceState } from "../../src/watch/engine.js";
import { createSourceHealthTracker, worstState } from "../../src/watch/source-health.js";

/**
 * Issue 41: a source no tick of which has succeeded is `starting` (not read yet), never `ok`,
 * until its first tick ends: ok when it succeeded, retrying when it failed. The clock is given.
 */
const START = Date.parse("2026-12-01T00:00:00Z");
const at = (ms: number) => new Date(ms).toISOString();

function state(fields: Partial<SourceState>): SourceState {
  return { key: "src_1", watch: "router", description: "router", running: false, last_tick_at: null, last_ok_at: null, last_outcome: null, last_error: null, last_tick_seconds: null, ticks: 0, skipped: 0, cursor: null, ...fields };
}

describe("a source not read yet", () => {
  it("is starting until its first tick ends, then ok or retrying", () => {
    const tracker = createSourceHealthTracker({ failingAfterMs: 120_000, behindBlocks: 100, stalledAfterMs: () => 60_000, startedAtMs: START });
    const observe = (fields: Partial<SourceState>, nowMs: number) => tracker.observe([state(fields)], 1000, nowMs)[0]!;

    expect(observe({}, START + 1000)).toMatchObject({ state: "starting", detail: "first tick pending" });
    // A stored cursor from an earlier run says nothing of this run's reads.
    expect(observe({ running: true, cursor: 990 }, START + 2000)).toMatchObject({ state: "starting", detail: "first tick running" });
    expect(observe({ last_tick_at: at(START + 3000), last_outcome: "paused", last_error: "KW_BUDGET" }, START + 3000)).toMatchObject({ state: "starting", detail: "not read yet: the daily credit budget is spent" });
    expect(worstState(["ok", "starting"])).toBe("starting");

    expect(observe({ last_tick_at: at(START + 4000), last_ok_at: at(START + 4000), last_outcome: "ok", cursor: 1000 }, START + 4000)).toMatchObject({ state: "ok" });
  });

  it("a first tick that failed is retrying, not starting", () => {
    const tracker = createSourceHealthTracker({ failingAfterMs: 120_000, behindBlocks: 100, stalledAfterMs: () => 60_000, startedAtMs: START });
    expect(tracker.observe([state({ last_tick_at: at(START + 1000), last_outcome: "error", last_error: "KW_EXPLORER_NETWORK: boom" })], 1000, START + 1000)[0]).toMatchObject({ state: "retrying" });
  });

  it("never ticked for longer than its stale limit is stalled, as before", () => {
    const tracker = createSourceHealthTracker({ failingAfterMs: 120_000, behindBlocks: 100, stalledAfterMs: () => 60_000, startedAtMs: START });
    expect(tracker.observe([state({})], 1000, START + 61_000)[0]).toMatchObject({ state: "stalled" });
  });
});
