import { describe, expect, it } from "vitest";
import { stepAbsence, type AbsenceRule } from "../../src/watch/absence.js";
import type { AbsenceState } from "../../src/store/types.js";

/**
 * One absence rule's steps without a chain: block N's timestamp is N seconds, and N + 100
 * from block 1000 on (a halt of 100 s before it). The end-to-end behaviour is in
 * absence.test.ts; these are the cases a chain makes slow to reach.
 */
const rule = (atLeast: number): AbsenceRule => ({
  name: "upkeep",
  watch: "keeper",
  spec: { atLeast, withinMs: 10_000, family: "event_logs", network: "mainnet", explorerUrl: "https://kaiascan.io" },
});
const signal = new AbortController().signal;
const now = new Date(0);
const timeOf = async (block: number) => (block >= 1000 ? block + 100 : block);

/** The step over [from, to], evaluated at `to`, with matches at these blocks (a block twice: two records). */
function step(r: AbsenceRule, state: AbsenceState | undefined, from: number, to: number, matches: number[] = []) {
  const counted = new Map<number, number>();
  for (const block of matches) counted.set(block, (counted.get(block) ?? 0) + 1);
  return stepAbsence(r, state, { from, to, evaluate: true, matches: counted }, timeOf, now, signal);
}

const seenOf = (alert: { record: unknown } | undefined) => (alert?.record as { seen: number } | undefined)?.seen;

describe("an absence rule's step", () => {
  it("keeps just enough of the newest matches to hold at_least, several in one block counted", async () => {
    let out = await step(rule(3), undefined, 1, 20, [2, 5, 5, 9, 14]);
    expect(out.state.recent.map((r) => [r.block, r.count])).toEqual([
      [5, 2],
      [9, 1],
      [14, 1],
    ]);
    // [10, 20] holds one record (block 14): fewer than 3.
    expect([out.alert?.status, seenOf(out.alert)]).toEqual(["firing", 1]);
    out = await step(rule(3), out.state, 21, 25, [25, 25, 25]);
    expect(out.state.recent).toEqual([{ block: 25, time: 25, count: 3 }]);
    expect([out.alert?.status, seenOf(out.alert)]).toEqual(["resolved", 3]);
  });

  it("neither counts nor decides again on blocks a rewind re-scans", async () => {
    const first = await step(rule(1), undefined, 1, 20, [3]);
    expect(first.alert?.status).toBe("firing");
    const again = await step(rule(1), first.state, 5, 20, [14]);
    expect(again).toEqual({ state: first.state, write: false });
  });

  it("starts observing again, with no alert for a whole window, after blocks it did not see or when it expects more than it kept", async () => {
    const start = await step(rule(1), undefined, 1, 8, [8]);
    // Blocks 9–99 were never observed (a cursor moved forward): block 100 is no absence yet.
    const gap = await step(rule(1), start.state, 100, 100);
    expect(gap.alert).toBeUndefined();
    expect(gap.state.since).toEqual({ block: 99, time: 99 });
    expect((await step(rule(1), gap.state, 101, 110)).alert?.status).toBe("firing");

    // One record was kept for at_least 1; the rule now expects 2: it cannot count them yet.
    const kept = await step(rule(1), undefined, 1, 10, [4, 9]);
    expect(kept.state.recent).toEqual([{ block: 9, time: 9, count: 1 }]);
    const more = await step(rule(2), kept.state, 11, 12);
    expect([more.alert, more.state.since, more.state.at_least]).toEqual([undefined, { block: 10, time: 10 }, 2]);
  });

  it("counts block time, not blocks: the block after a halt is past the window, and the window starts at it", async () => {
    const before = await step(rule(1), undefined, 980, 999, [995]);
    expect(before.alert).toBeUndefined();
    const after = await step(rule(1), before.state, 1000, 1000);
    expect(after.alert?.status).toBe("firing");
    expect(after.alert?.record).toMatchObject({ seen: 0, window: { from_block: 1000, to_block: 1000, from: new Date(1090_000).toISOString(), to: new Date(1100_000).toISOString() }, last_seen: { block: 995 } });
  });
});
