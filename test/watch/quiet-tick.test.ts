import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { readOnDisk } from "../store/fixtures/on-disk.js";
import { createWatchEngine } from "../../src/watch/engine.js";
import type { PlannedSource, SourcePoller } from "../../src/watch/poller.js";
import { configFromText, quietCommon, schedulesOf, tempDir } from "../helpers/harness.js";
import { observeFor, workFor } from "../helpers/wait-for.js";
import { idleContractsToOut, simulatorHead } from "../helpers/simulator-config.js";

/**
 * Many sources over a quiet chain: one tick asks once per source, writes the store once
 * (not once per source), and has every cursor on disk when it is over; the scheduled
 * firing does the same. Ticks run a bounded number at a time.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SOURCES = 300;

async function setup(): Promise<{ sim: Simulator; daemon: Daemon; storePath: string }> {
  const sim = await createSimulator({ seed: 5, initialBlocks: 5, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  cleanups.push(() => sim.close());
  const dir = tempDir();
  const storePath = join(dir.path, "store.json");
  const config = configFromText(`
${simulatorHead(sim, { storePath, requestsPerSecond: 100000 })}
defaults: { start: latest, schedule: "* * * * * *", jitter: 0s }
${idleContractsToOut(SOURCES)}
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`);
  const daemon = await createDaemon(quietCommon(), { config });
  cleanups.push(async () => {
    await daemon.stop();
    dir.remove();
  });
  return { sim, daemon, storePath };
}

const cursorsOnDisk = (path: string) => Object.values(readOnDisk(path).cursors).map((c) => c.block);

describe("a tick over a quiet chain", () => {
  it("asks once per source, writes the store once, and leaves every cursor on disk", async () => {
    const { sim, daemon, storePath } = await setup();
    expect(daemon.plan.sources).toHaveLength(SOURCES);
    await daemon.engine.runOnce(); // sets every cursor at the head
    sim.mine(1);
    sim.resetStats();
    const writes = (await daemon.store.stats()).writes;
    const { head, results } = await daemon.engine.runOnce();
    expect(results.filter((r) => r.error !== undefined)).toEqual([]);
    const requests = sim.stats().requests;
    expect(Object.entries(requests).filter(([op]) => op !== "rpc").reduce((n, [, byStatus]) => n + (byStatus["200"] ?? 0), 0)).toBe(SOURCES);
    expect((await daemon.store.stats()).writes - writes).toBe(1);
    expect(cursorsOnDisk(storePath)).toEqual(Array(SOURCES).fill(head));
  });

  it("when scheduled, writes the cursors of a firing once its ticks are over", async () => {
    const { sim, daemon, storePath } = await setup();
    await daemon.engine.runOnce();
    const head = sim.head() + 1;
    sim.mine(1);
    await daemon.start();
    await daemon.engine.idle(); // the first firing, and its one write of the quiet windows
    expect(cursorsOnDisk(storePath)).toEqual(Array(SOURCES).fill(head));
  });
});

describe("start", () => {
  it("ticks every source at once, not at the schedule's next time; idle() resolves once those ticks have ended", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let allStarted!: () => void;
    const started = new Promise<void>((resolve) => (allStarted = resolve));
    let ticking = 0;
    const pollers: SourcePoller[] = Array.from({ length: 3 }, (_, i) => ({
      // Once a year: the schedule itself will not fire while this test runs.
      source: { key: `s${i}`, watch: `w${i}`, description: `s${i}`, schedule: "0 0 0 1 1 *" } as PlannedSource,
      async tick(head) {
        if (++ticking === 3) allStarted();
        await gate;
        return { cursor: head, windows: 1, records: 0, alerts: 0 };
      },
    }));
    let flushes = 0;
    const engine = createWatchEngine(quietCommon(), { pollers, schedules: schedulesOf(pollers), readHead: async () => 42, jitterMs: 0, flush: async () => void flushes++ });
    cleanups.push(() => engine.stop());
    engine.start();
    let idle = false;
    const idled = engine.idle().then(() => void (idle = true));
    await started;
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    release();
    await idled;
    expect(engine.states().every((s) => s.ticks === 1 && s.cursor === 42)).toBe(true);
    expect(flushes).toBe(1);
  });
});

describe("tick concurrency", () => {
  it("runs at most maxConcurrentTicks ticks at once and still ticks every source", async () => {
    let running = 0;
    let most = 0;
    const ticked: string[] = [];
    const pollers: SourcePoller[] = Array.from({ length: 40 }, (_, i) => ({
      source: { key: `s${i}`, watch: `w${i}`, description: `s${i}`, schedule: "* * * * * *" } as PlannedSource,
      async tick(head) {
        running++;
        most = Math.max(most, running);
        await workFor(5);
        running--;
        ticked.push(`s${i}`);
        return { cursor: head, windows: 1, records: 0, alerts: 0 };
      },
    }));
    let flushes = 0;
    const engine = createWatchEngine(quietCommon(), { pollers, schedules: schedulesOf(pollers), readHead: async () => 10, jitterMs: 0, maxConcurrentTicks: 4, flush: async () => void flushes++ });
    const { results } = await engine.runOnce();
    expect(results.every((r) => r.result?.cursor === 10)).toBe(true);
    expect(ticked).toHaveLength(40);
    expect(most).toBe(4);
    expect(flushes).toBe(1);
  });

  it("with jitter, ticks every source of a firing once and starts none after a stop", async () => {
    const ticks = new Map<string, number>();
    let stopped = false;
    let afterStop = 0;
    const pollers: SourcePoller[] = Array.from({ length: 200 }, (_, i) => ({
      source: { key: `s${i}`, watch: `w${i}`, description: `s${i}`, schedule: "0 0 0 1 1 *" } as PlannedSource,
      async tick(head) {
        if (stopped) afterStop++;
        ticks.set(`s${i}`, (ticks.get(`s${i}`) ?? 0) + 1);
        return { cursor: head, windows: 1, records: 0, alerts: 0 };
      },
    }));
    let flushes = 0;
    // The schedule never fires during the test: only the first firing at start() runs.
    const engine = createWatchEngine(quietCommon(), { pollers, schedules: schedulesOf(pollers), readHead: async () => 10, jitterMs: 300, maxConcurrentTicks: 8, flush: async () => void flushes++ });
    engine.start();
    await engine.idle();
    expect(flushes).toBe(1);
    expect([...ticks.values()]).toEqual(Array(200).fill(1));

    // A second engine stopped inside its jitter window: the stop returns, and no tick starts after it.
    ticks.clear();
    let headRead!: () => void;
    const firstHeadRead = new Promise<void>((resolve) => (headRead = resolve));
    const readHead = async () => {
      headRead();
      return 10;
    };
    const second = createWatchEngine(quietCommon(), { pollers, schedules: schedulesOf(pollers), readHead, jitterMs: 60_000, flush: async () => {} });
    second.start();
    await firstHeadRead;
    await second.stop();
    stopped = true;
    await observeFor(50);
    expect(afterStop).toBe(0);
    expect(ticks.size).toBeLessThan(200);
  });
});
