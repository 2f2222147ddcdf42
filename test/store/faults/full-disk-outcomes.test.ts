import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { createDispatcher, type Dispatcher } from "../../../src/notify/dispatcher.js";
import { DELIVERY_PAUSED_CODE } from "../../../src/notify/outcome-gate.js";
import { openSqliteStore } from "../../../src/store/open-store.js";
import type { SqliteStore } from "../../../src/store/sqlite-store.js";
import { commit, entry, recording, transient, until } from "../../notify/dispatcher-fixtures.js";
import { CAN_MOUNT_TMPFS, fillFileSystem } from "../../helpers/tmpfs.js";
import { makeTempDir } from "../fixtures/temp-dir.js";
import { observeFor } from "../../helpers/wait-for.js";

/**
 * A full disk with alerts pending (issue 29, item 4). The sends succeed (or fail), but their
 * "delivered" and "failed" marks cannot be committed and are rolled back: the alerts stay
 * pending with their attempts unchanged. Before, every pass sent them again, with no backoff
 * and no end (one alert 30 times in 30 s). Now the dispatcher holds every send while the
 * store cannot record an outcome, says so (a log line with its KW code), tries the store
 * again with a growing wait, and resumes once a write succeeds.
 *
 * A real full disk: the store on a small tmpfs, filled to ENOSPC by a file beside it; SQLite's
 * COMMIT then fails with SQLITE_FULL (the WAL cannot grow). Needs root or CAP_SYS_ADMIN.
 */
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve().then(cleanup).catch(() => undefined);
});

const OK_ALERTS = 24;
const FAILING_ALERTS = 6;
const MAX_ATTEMPTS = 3;

describe.skipIf(!CAN_MOUNT_TMPFS)("a full disk with alerts pending", () => {
  it("sends each alert at most once while outcomes cannot be recorded, says so, and resumes when the disk has room", async () => {
    const temp = makeTempDir();
    cleanups.push(() => temp.remove());
    const mount = join(temp.dir, "disk");
    mkdirSync(mount);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mount], { stdio: "ignore" });
    cleanups.push(() => void execFileSync("umount", [mount], { stdio: "ignore" }));

    const logLines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logLines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
        callback();
      },
    });
    const common = createTestCommon({ logger: pino({ level: "info" }, destination) });
    const store: SqliteStore = await openSqliteStore(common, { path: join(mount, "kaiawatch.json") });
    cleanups.push(() => store.close());

    await commit(store, [
      ...Array.from({ length: OK_ALERTS }, (_, i) => entry(`ok${i}`, "hook")),
      ...Array.from({ length: FAILING_ALERTS }, (_, i) => entry(`bad${i}`, "flaky")),
    ]);
    const hook = recording("hook");
    const flaky = recording("flaky", () => {
      throw transient();
    });

    const filler = join(mount, "filler");
    fillFileSystem(filler);

    const dispatcher: Dispatcher = createDispatcher(common, {
      store,
      rules: [],
      sinks: [
        { sink: hook, concurrency: 4, maxAttempts: MAX_ATTEMPTS, maxAgeMs: 3600_000 },
        { sink: flaky, concurrency: 2, maxAttempts: MAX_ATTEMPTS, maxAgeMs: 3600_000 },
      ],
      // Fast passes: without the pause, the storm shows within the second below. Retries wait
      // longer than an outcome's commit (20 ms), as they do by far with the default backoff.
      idlePollMs: 50,
      backoff: { baseMs: 200, maxMs: 400 },
      random: () => 1,
      storeProbe: { baseMs: 200, maxMs: 400 },
      stopTimeoutMs: 500,
    });
    cleanups.push(() => dispatcher.stop());
    dispatcher.start();

    // The first sends go out, their outcomes fail to commit, and delivery pauses. A nearly
    // full disk may take a small write and not the outcomes: then delivery resumes, fails
    // again and pauses again, each time after a longer wait. Each failed write costs at most
    // one send per alert (the one whose outcome it rolled back); before, the store failed a
    // write at every pass and 390 sends went out in a second.
    await until(() => logLines.some((line) => line.includes(DELIVERY_PAUSED_CODE)), 10_000, "the pause's log line");
    await observeFor(1_000);
    const perId = (calls: { id: string }[]) => {
      const counts = new Map<string, number>();
      for (const call of calls) counts.set(call.id, (counts.get(call.id) ?? 0) + 1);
      return counts;
    };
    const failedWhileFull = (await store.stats()).failedWrites;
    expect(failedWhileFull, "failed writes in the first second: the store is tried ever more rarely").toBeLessThanOrEqual(8);
    const sentWhileFull = hook.calls.length + flaky.calls.length;
    expect(sentWhileFull, `sends while the disk was full: ${sentWhileFull}`).toBeLessThanOrEqual(OK_ALERTS * (1 + failedWhileFull) + FAILING_ALERTS * (MAX_ATTEMPTS + failedWhileFull));
    expect(Math.max(...perId(hook.calls).values())).toBeLessThanOrEqual(1 + failedWhileFull);
    const paused = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.code === DELIVERY_PAUSED_CODE);
    expect(paused).toMatchObject({ level: 40, store: store.path });
    expect(String(paused?.msg)).toContain("deliveries are paused");

    // Room again: the next probe succeeds, and delivery goes on by itself.
    rmSync(filler);
    await until(async () => (await store.countOutbox({ state: "pending" })) === 0, 15_000, "every alert delivered or dead");
    expect(await store.countOutbox({ sink: "hook", state: "delivered" })).toBe(OK_ALERTS);
    expect(await store.countOutbox({ sink: "flaky", state: "dead" })).toBe(FAILING_ALERTS);
    expect(logLines.some((line) => line.includes(DELIVERY_PAUSED_CODE) && line.includes("deliveries resume"))).toBe(true);

    // No more sends than the attempts allow: an accepted alert whose mark was rolled back is
    // sent once more (same id), and a failed attempt whose mark was rolled back is not counted:
    // one send more per failed write at most.
    expect(new Set(hook.delivered)).toEqual(new Set(Array.from({ length: OK_ALERTS }, (_, i) => `ok${i}`)));
    const failed = (await store.stats()).failedWrites;
    expect(Math.max(...perId(hook.calls).values())).toBeLessThanOrEqual(1 + failed);
    expect(Math.max(...perId(flaky.calls).values())).toBeLessThanOrEqual(MAX_ATTEMPTS + failed);
    expect(hook.calls.length + flaky.calls.length).toBeLessThanOrEqual((1 + failed) * OK_ALERTS + (MAX_ATTEMPTS + failed) * FAILING_ALERTS);
  });
});
