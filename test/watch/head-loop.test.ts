import { describe, expect, it } from "vitest";
import { createWatchEngine } from "../../src/watch/engine.js";
import type { PlannedSource, SourcePoller } from "../../src/watch/poller.js";
import { quietCommon, schedulesOf } from "../helpers/harness.js";

/**
 * The head loop of `schedule: head` sources, with the head, the clock and the head reads all
 * in the test's hands: a source ticks when the head passes its cursor and not otherwise, and
 * after a failed tick it waits its backoff (1 s, then 2 s …) on the clock, not at every read.
 */
function harness(failFirst: number) {
  let head = 10;
  let clock = 1_000_000;
  const ticks: number[] = [];
  let failures = 0;
  const poller: SourcePoller = {
    source: { key: "s", watch: "w", description: "s", schedule: "head" } as PlannedSource,
    async tick(at) {
      ticks.push(at);
      if (failures < failFirst) {
        failures++;
        throw new Error("the explorer is down");
      }
      return { cursor: at, windows: 1, records: 0, alerts: 0 };
    },
  };
  let release: (() => void) | undefined;
  let reads = 0;
  const engine = createWatchEngine(quietCommon({ now: () => clock }), {
    pollers: [poller],
    schedules: schedulesOf([poller]),
    readHead: async () => head,
    jitterMs: 0,
    waitForHead: (signal) =>
      new Promise<void>((resolve, reject) => {
        reads++;
        const onAbort = () => reject(signal.reason as Error);
        signal.addEventListener("abort", onAbort, { once: true });
        release = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
      }),
  });
  const settle = async () => {
    // The tick and the firing's end run on promises: a few turns of the loop see them done.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    engine,
    ticks,
    setHead: (block: number) => void (head = block),
    advance: (ms: number) => void (clock += ms),
    /** One read of the head, and what it set off. */
    async read() {
      const before = reads;
      while (release === undefined) await settle();
      const go = release;
      release = undefined;
      go();
      while (reads === before) await settle();
      await settle();
    },
    settle,
  };
}

describe("schedule: head, the loop", () => {
  it("ticks at start, then only when the head has passed the cursor", async () => {
    const h = harness(0);
    h.engine.start();
    await h.settle();
    expect(h.ticks).toEqual([10]);
    await h.read();
    await h.read();
    expect(h.ticks).toEqual([10]);
    h.setHead(13);
    await h.read();
    expect(h.ticks).toEqual([10, 13]);
    await h.engine.stop();
  });

  it("after a failed tick waits 1 s, then 2 s, on the clock, whatever the head does", async () => {
    const h = harness(2);
    h.engine.start();
    await h.settle();
    expect(h.ticks).toEqual([10]); // failed
    h.setHead(11);
    await h.read();
    expect(h.ticks).toEqual([10]);
    h.advance(1_000);
    await h.read();
    expect(h.ticks).toEqual([10, 11]); // failed again: 2 s now
    h.advance(1_999);
    await h.read();
    expect(h.ticks).toEqual([10, 11]);
    h.advance(1);
    await h.read();
    expect(h.ticks).toEqual([10, 11, 11]); // succeeded
    h.setHead(12);
    await h.read();
    expect(h.ticks).toEqual([10, 11, 11, 12]);
    await h.engine.stop();
  });
});
