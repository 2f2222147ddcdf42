import { describe, expect, it } from "vitest";
import { runTorture } from "../../bench/torture/run-torture.js";

/**
 * A short version of `npm run torture`: twenty seconds of explorer faults (5xx, truncated and
 * malformed bodies, resets, squeezed rate limits with Retry-After), a webhook receiver that
 * fails often, one that goes down and comes back, a real SMTP server answering 451 now and
 * then, and `kaiawatch run` killed with SIGKILL at least five times. Then `kaiawatch once`
 * finishes, and every receiver's alerts are compared with the simulator's ground truth.
 * The store starts with 100,000 delivered alerts in it, as after a week of a busy feed.
 */
describe("torture, short", () => {
  it("loses no alert, skips no block, and repeats an alert only under its own id", async () => {
    // A fixed seed, so that a run is repeatable (KW_TORTURE_SEED tries another); the kills still
    // fall where the wall clock puts them, which the checks below do not depend on.
    const seed = Number(process.env.KW_TORTURE_SEED ?? 271_828);
    const summary = await runTorture({ durationMs: 20_000, minKills: 5, seed, sinkFailureRate: 0.15, seedDelivered: 100_000 });
    const context = `seed ${seed}: ${JSON.stringify({ failures: summary.failures, examples: summary.examples })}`;
    expect(summary.kills, context).toBeGreaterThanOrEqual(5);
    expect(summary.records_total, context).toBeGreaterThan(100);
    expect(summary.lost, context).toBe(0);
    expect(summary.gaps, context).toBe(0);
    expect(summary.duplicates_new_id, context).toBe(0);
    expect(summary.unexpected, context).toBe(0);
    expect(summary.bad_signatures, context).toBe(0);
    expect(summary.unexpected_exits, context).toBe(0);
    expect(summary.outbox_at_end, context).toEqual({ pending: 0, dead: 0 });
    // The faults really happened: a run without them would prove nothing.
    expect(summary.explorer.faults.serverError ?? 0, context).toBeGreaterThan(0);
    expect(Object.values(summary.sink_faults.flaky ?? {}).reduce((a, b) => a + b, 0), context).toBeGreaterThan(0);
    for (const [sink, delivered] of Object.entries(summary.deliveries)) expect(delivered.distinct, `${sink} (${context})`).toBe(delivered.expected);
    expect(summary.ok, context).toBe(true);
    console.log(`torture (short): ${summary.kills} kills, ${summary.records_total} records, lost ${summary.lost}, gaps ${summary.gaps}, ${summary.duplicates_same_id} duplicates under their own id (seed ${seed})`);
  }, 180_000);
});
