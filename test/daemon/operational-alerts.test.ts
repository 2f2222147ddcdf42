import { rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import type { Daemon } from "../../src/daemon/create-daemon.js";
import { OPERATIONAL_RULE } from "../../src/daemon/operational-monitor.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { logCapture, tempDir } from "../helpers/harness.js";
import { operationalWorld, type OperationalWorld, type OperationalWorldOptions } from "../helpers/operational-world.js";
import { CAN_MOUNT_TMPFS, fillFileSystem } from "../helpers/tmpfs.js";

/**
 * kaiawatch's alerts about itself, end to end in-process: the simulator as explorer and chain
 * (its head read through a front the test can hold back or stop), a real webhook receiver as
 * the operational sink. For each condition: it fires once, with a stable id; a restart while
 * it holds repeats nothing and resolves nothing (the restarted daemon checks its health before
 * its first tick, as its timers may); it clears once, under `<id>:resolved`; and a restart
 * after that sends nothing. The daemon's clock is injected and shifted by the test, and
 * ticks, checks and deliveries are driven by hand, so no outcome waits on the wall clock.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  const errors: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve().then(cleanup).catch((error: unknown) => errors.push(error));
  if (errors.length > 0) throw errors[0];
});

const kindOf = (alert: AlertDocument) => (alert.record as { kind: string }).kind;

/** A switch the world's `out` sink reads: 503 (retried) while down. */
interface Flags {
  outDown: boolean;
}

interface Case {
  /** The conditions this scenario fires and clears, once each. */
  kinds: string[];
  world?: (flags: Flags) => Partial<OperationalWorldOptions>;
  /** Makes the condition hold and runs rounds until it fired. */
  begin(w: OperationalWorld, daemon: Daemon, flags: Flags): Promise<void>;
  /** How rounds go while it holds (default: one block mined, deliveries drained for up to 5 s). */
  whileHeld?: { mine?: number; drainTimeoutMs?: number };
  /** Ends it and runs rounds until it cleared. */
  end(w: OperationalWorld, daemon: Daemon, flags: Flags): Promise<void>;
}

const cases: Record<string, Case> = {
  "a source behind the head by more than source_behind_blocks": {
    kinds: ["source_behind"],
    world: () => ({ operational: "source_behind_blocks: 5" }),
    async begin(w, daemon) {
      // The explorer answers nothing while the chain goes on: the cursor stays, the lag grows.
      w.sim.setFaults({ maintenance: true });
      await w.round(daemon, { mine: 10 });
    },
    async end(w, daemon) {
      w.sim.setFaults({ maintenance: false });
      await w.round(daemon);
    },
  },
  "a sink stalled (its oldest pending alert older than sink_pending_age)": {
    kinds: ["sink_stalled"],
    world: (flags) => ({ operational: "sink_pending_age: 1m, sink_backlog_growth: 100000", outSink: "max_attempts: 1000", outStatus: () => (flags.outDown ? 503 : 200) }),
    whileHeld: { drainTimeoutMs: 200 },
    async begin(w, daemon, flags) {
      flags.outDown = true;
      // Deliveries fail while it is down: a short drain, or each round waits out its timeout.
      await w.round(daemon, { mine: 5, drainTimeoutMs: 200 });
      w.advance(61_000);
      await w.round(daemon, { drainTimeoutMs: 200 });
    },
    async end(w, daemon, flags) {
      flags.outDown = false;
      // Past the longest retry backoff (10 min): every pending alert is due.
      w.advance(11 * 60_000);
      await w.round(daemon);
      await w.round(daemon);
    },
  },
  "a sink whose backlog grows": {
    kinds: ["sink_backlog_growing"],
    world: (flags) => ({ operational: "sink_backlog_window: 1m, sink_backlog_growth: 5, sink_pending_age: 1h", outSink: "max_attempts: 1000", outStatus: () => (flags.outDown ? 503 : 200) }),
    whileHeld: { drainTimeoutMs: 200 },
    async begin(w, daemon, flags) {
      flags.outDown = true;
      await w.round(daemon, { mine: 3, drainTimeoutMs: 200 });
      w.advance(61_000);
      await w.round(daemon, { mine: 5, drainTimeoutMs: 200 });
    },
    async end(w, daemon, flags) {
      flags.outDown = false;
      w.advance(11 * 60_000);
      await w.round(daemon);
      await w.round(daemon);
    },
  },
  "the head not moving for head_stuck_after": {
    kinds: ["head_stuck"],
    world: () => ({ operational: "head_stuck_after: 1m" }),
    whileHeld: { mine: 0 },
    async begin(w, daemon) {
      await w.round(daemon, { mine: 0 });
      w.advance(61_000);
      await w.round(daemon, { mine: 0 });
    },
    async end(w, daemon) {
      await w.round(daemon, { mine: 1 });
    },
  },
  "the head moving backwards (a node restarted 740 blocks lower)": {
    kinds: ["head_backwards"],
    async begin(w, daemon) {
      w.front.head = w.sim.head() - 740;
      await w.round(daemon, { mine: 0 });
    },
    async end(w, daemon) {
      w.front.head = undefined;
      await w.round(daemon);
    },
  },
  "the head unreachable for source_failing_after": {
    kinds: ["head_unreachable"],
    world: () => ({ operational: "source_failing_after: 1m" }),
    async begin(w, daemon) {
      w.front.down = true;
      await w.round(daemon);
      w.advance(61_000);
      await w.round(daemon);
    },
    async end(w, daemon) {
      w.front.down = false;
      await w.round(daemon);
    },
  },
  "the explorer behind the head (its records disagree with its total_count)": {
    kinds: ["explorer_behind_head"],
    world: () => ({ daemon: { recount: { retries: 1, baseMs: 1, maxMs: 1 } } }),
    async begin(w, daemon) {
      w.sim.setFaults({ shortPageRate: 1 });
      await w.round(daemon, { mine: 3 });
    },
    async end(w, daemon) {
      w.sim.setFaults({ shortPageRate: 0 });
      await w.round(daemon);
    },
  },
  "credits running out (80% spent, then all of them), until the next UTC day": {
    kinds: ["credits_low", "credits_exhausted"],
    world: () => ({ explorer: "daily_credit_budget: 12" }),
    async begin(w, daemon) {
      // Three credits a window, one window a round; the next day's three rounds stay below 80%.
      for (let i = 0; i < 8 && daemon.budget.state().paused_until === null; i++) await w.round(daemon);
      expect(daemon.budget.state().paused_until).not.toBeNull();
      await w.round(daemon);
    },
    async end(w, daemon) {
      w.advance(86_400_000 - (w.now() % 86_400_000) + 1_000);
      await w.round(daemon);
      await w.round(daemon);
    },
  },
};

async function checkBeforeFirstTick(daemon: Daemon, drainTimeoutMs = 5_000): Promise<void> {
  await daemon.health.check();
  await daemon.dispatcher.drain({ timeoutMs: drainTimeoutMs });
}

describe("operational alerts: each fires once with a stable id, survives a restart, clears once", () => {
  it.each(Object.entries(cases))("%s", async (_name, c) => {
    const flags: Flags = { outDown: false };
    const w = await operationalWorld({ cleanups, ...c.world?.(flags) });
    const ofKinds = () => w.received().filter((alert) => c.kinds.includes(kindOf(alert)));
    let daemon = await w.start();
    await w.round(daemon);
    expect(ofKinds()).toEqual([]);

    await c.begin(w, daemon, flags);
    const fired = ofKinds();
    expect(fired.map(kindOf).sort()).toEqual([...c.kinds].sort());
    for (const alert of fired) expect(alert).toMatchObject({ rule: OPERATIONAL_RULE, source: "kaiawatch", status: "firing" });

    // Still holding, through a restart: nothing repeated, nothing resolved.
    await daemon.stop();
    daemon = await w.start();
    await checkBeforeFirstTick(daemon, c.whileHeld?.drainTimeoutMs);
    await w.round(daemon, c.whileHeld);
    await w.round(daemon, c.whileHeld);
    expect(ofKinds()).toEqual(fired);
    expect((await daemon.health.evaluate()).conditions.map((condition) => condition.kind)).toEqual(expect.arrayContaining(c.kinds));

    await c.end(w, daemon, flags);
    const resolved = ofKinds().slice(fired.length);
    expect(resolved.map((alert) => [alert.id, alert.status]).sort()).toEqual(fired.map((alert) => [`${alert.id}:resolved`, "resolved"]).sort());
    // The webhook carries the alert id as its webhook-id: the receiver ties the two together.
    const ids = new Set([...fired, ...resolved].map((alert) => alert.id));
    const hookIds = w.receiver.requests.filter((r) => r.url === "/ops" && ids.has(r.headers["webhook-id"] as string)).map((r) => r.headers["webhook-id"]);
    expect(hookIds).toHaveLength(ids.size);

    // A restart after it cleared sends nothing again.
    await daemon.stop();
    daemon = await w.start();
    await checkBeforeFirstTick(daemon);
    await w.round(daemon);
    expect(ofKinds()).toHaveLength(fired.length + resolved.length);
  });

  it("a source failing: retrying first (no alert), then failing", async () => {
    const w = await operationalWorld({ cleanups, operational: "source_failing_after: 2m" });
    const failing = () => w.received().filter((alert) => kindOf(alert) === "source_failing");
    let daemon = await w.start();
    await w.round(daemon);
    expect((await daemon.health.evaluate()).sources.map((s) => s.state)).toEqual(["ok"]);

    w.sim.setFaults({ maintenance: true });
    await w.round(daemon);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("retrying");
    w.advance(60_000);
    await w.round(daemon);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("retrying");
    expect(failing()).toEqual([]);
    w.advance(61_000);
    await w.round(daemon);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("failing");
    const [firing] = failing();
    expect(failing()).toHaveLength(1);

    // Still failing through a restart: neither resolved nor repeated.
    await daemon.stop();
    daemon = await w.start();
    await checkBeforeFirstTick(daemon);
    await w.round(daemon);
    w.advance(30_000);
    await w.round(daemon);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("failing");
    expect(failing()).toHaveLength(1);

    // One successful tick: ok again, and one resolved alert in the same id family.
    w.sim.setFaults({ maintenance: false });
    await w.round(daemon);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("ok");
    await w.round(daemon);
    expect(failing().map((a) => [a.id, a.status])).toEqual([
      [firing!.id, "firing"],
      [`${firing!.id}:resolved`, "resolved"],
    ]);

    await daemon.stop();
    daemon = await w.start();
    await checkBeforeFirstTick(daemon);
    await w.round(daemon);
    expect(failing()).toHaveLength(2);
  });

  it("dead letters: one firing alert when they appear, one resolved alert once they are requeued and delivered", async () => {
    let refusing = true;
    // /out refuses with 400 (a permanent error: a dead letter) while refusing.
    const w = await operationalWorld({ cleanups, outStatus: () => (refusing ? 400 : 200) });
    const dead = () => w.received().filter((alert) => kindOf(alert) === "dead_letters");
    let daemon = await w.start();
    await w.round(daemon); // the first pass starts at the head: no alerts yet
    for (let i = 0; i < 3 && (await daemon.store.countOutbox({ state: "dead" })) === 0; i++) await w.round(daemon, { mine: 5 });
    expect(await daemon.store.countOutbox({ state: "dead" })).toBeGreaterThan(0);
    await w.round(daemon);
    expect(dead()).toHaveLength(1);
    expect(dead()[0]).toMatchObject({ status: "firing", rule: OPERATIONAL_RULE });

    await daemon.stop();
    daemon = await w.start();
    await checkBeforeFirstTick(daemon);
    expect(dead()).toHaveLength(1);

    refusing = false;
    await daemon.dispatcher.retry({ all: true });
    await daemon.dispatcher.drain({ timeoutMs: 5_000 });
    await w.round(daemon);
    expect(dead().map((a) => [a.id, a.status])).toEqual([
      [dead()[0]!.id, "firing"],
      [`${dead()[0]!.id}:resolved`, "resolved"],
    ]);
  });

  it.skipIf(!CAN_MOUNT_TMPFS)("the store not writable (a full disk): logged once when it starts and once when it clears; its alerts reach the sinks once the store writes again", async () => {
    const dir = tempDir("kaiawatch-tmpfs-");
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", dir.path], { stdio: "ignore" });
    cleanups.push(() => {
      execFileSync("umount", [dir.path], { stdio: "ignore" });
      dir.remove();
    });
    const w = await operationalWorld({ cleanups, storeDir: dir.path });
    const logs = logCapture();
    const logger = createLogger({ level: "info", redactor: createSecretRedactor(), destination: logs.destination });
    const ofKind = () => w.received().filter((alert) => kindOf(alert) === "store_not_writable");
    const logged = (level: number) => logs.lines.filter((line) => line.kind === "store_not_writable" && line.level === level);
    let daemon = await w.start({ common: { logger } });
    await w.round(daemon);

    const filler = join(dir.path, "filler");
    // A checkpoint may still free pages of the WAL: fill until a write fails and the check sees it.
    for (let i = 0; i < 5 && logged(40).length === 0; i++) {
      fillFileSystem(filler);
      await w.round(daemon, { mine: 3 });
    }
    expect(logged(40)).toHaveLength(1);
    await w.round(daemon);
    await w.round(daemon);
    expect(logged(40)).toHaveLength(1);
    expect(ofKind()).toEqual([]);

    rmSync(filler);
    await w.round(daemon);
    await w.round(daemon);
    expect((await daemon.store.stats()).lastWriteFailed).toBe(false);
    expect(logged(30)).toHaveLength(1);
    expect(ofKind().map((alert) => alert.status)).toEqual(["firing", "resolved"]);
    expect(ofKind()[1]!.id).toBe(`${ofKind()[0]!.id}:resolved`);

    await daemon.stop();
    daemon = await w.start({ common: { logger } });
    await checkBeforeFirstTick(daemon);
    await w.round(daemon);
    expect(ofKind()).toHaveLength(2);
    expect(logged(40)).toHaveLength(1);
  });
});
