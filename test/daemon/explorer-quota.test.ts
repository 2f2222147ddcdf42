import { afterEach, describe, expect, it } from "vitest";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { operationalWorld } from "../helpers/operational-world.js";

/**
 * The explorer's own daily quota runs out under a running daemon (a 429 of type
 * requestPerDay, without Retry-After). Nothing is asked of the explorer until kaiawatch asks
 * again (within the hour), `credits_exhausted` fires once and holds through those asks, and
 * when the quota has reset polling resumes by itself and catches up without a gap.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const kindOf = (alert: AlertDocument) => (alert.record as { kind: string }).kind;
const apiRequests = (stats: { requests: Record<string, Record<string, number>> }) =>
  Object.entries(stats.requests)
    .filter(([op]) => op !== "rpc")
    .reduce((n, [, byStatus]) => n + Object.values(byStatus).reduce((m, k) => m + k, 0), 0);

describe("the explorer's daily quota", () => {
  it("stops every request until the next ask, raises credits_exhausted once, and resumes by itself", async () => {
    const w = await operationalWorld({ cleanups });
    // The daemon's day starts at noon UTC: the two and a half hours the test moves its clock stay in one day.
    w.advance((Math.floor(w.now() / 86_400_000) + 1.5) * 86_400_000 - w.now());
    const daemon = await w.start();
    await w.round(daemon);
    const source = daemon.plan.sources[0]!;
    const cursorOf = async () => (await daemon.store.getCursor(source.key))?.block;
    const start = await cursorOf();

    // The explorer allows nothing more today.
    w.sim.setFaults({ dailyCreditQuota: w.sim.stats().creditsToday });
    await w.round(daemon);
    expect(daemon.budget.state().quota).toMatchObject({ limit: w.sim.stats().creditsToday });
    const fired = w.received().filter((a) => kindOf(a) === "credits_exhausted");
    expect(fired).toHaveLength(1);
    expect(fired[0]!.summary).toContain("daily quota");

    // Until the next ask, not one request reaches the explorer, whatever the rounds.
    w.sim.resetStats();
    for (let i = 0; i < 3; i++) {
      w.advance(10 * 60_000);
      await w.round(daemon);
    }
    expect(apiRequests(w.sim.stats())).toBe(0);
    expect(await cursorOf()).toBe(start);

    // An hour after the refusal one request asks again: still spent, and the alert holds.
    w.advance(31 * 60_000);
    await w.round(daemon);
    expect(apiRequests(w.sim.stats())).toBe(1);
    expect(w.received().filter((a) => kindOf(a) === "credits_exhausted")).toHaveLength(1);

    // The quota resets: at the next ask polling resumes and catches up.
    w.sim.setFaults({ dailyCreditQuota: undefined });
    w.advance(61 * 60_000);
    await w.round(daemon);
    await w.round(daemon);
    expect(await cursorOf()).toBe(w.sim.head());
    expect(daemon.budget.state().quota).toBeNull();
    const episode = w.received().filter((a) => kindOf(a) === "credits_exhausted");
    expect(episode.map((a) => a.status)).toEqual(["firing", "resolved"]);
    const expected = w.sim.truth.accountEventLogs(w.sim.addresses.busyToken, { from: (start as number) + 1, to: w.sim.head() }).length;
    const delivered = w.receiver.requests.filter((r) => r.url === "/out").map((r) => (JSON.parse(r.body) as AlertDocument).block);
    expect(delivered.filter((block) => block > (start as number))).toHaveLength(expected);
  });
});
