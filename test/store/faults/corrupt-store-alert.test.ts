import { closeSync, openSync, statSync, writeSync } from "node:fs";
import { Writable } from "node:stream";
import { pino } from "pino";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import type { AlertDocument } from "../../../src/model/alert-document.js";
import { operationalWorld } from "../../helpers/operational-world.js";
import { tempDir } from "../../helpers/harness.js";
import { WEBHOOK_SECRET } from "../../notify/e2e-support.js";
import { closedStore } from "./files.js";
import { garbage } from "../fixtures/garbage.js";

/**
 * Damage found while running reaches the sinks (issue 29, item 3: "an operational alert").
 * A damaged store stops every write, the outbox's with them, so the `store_corrupt` alert
 * could only be logged and fail /readyz. Now its firing alert is sent directly to the sinks
 * marked `operational: true`, once per process, best effort.
 *
 * End to end: a daemon in-process against the simulator, its store damaged under it (garbage
 * in the middle of the file, as in damaged-database.test.ts), and a real webhook receiver on
 * 127.0.0.1 as the operational sink, whose signatures the `standardwebhooks` package verifies.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve().then(cleanup).catch(() => undefined);
});

const PAGE = 4096;

describe("a store damaged while running", () => {
  it("sends its store_corrupt alert directly to the operational sinks, signed, once, and keeps the health check quiet", async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    // A store with some history (entries of a sink long gone): pages the daemon has not read yet.
    await closedStore(`${dir.path}/store.json`, 300);
    const world = await operationalWorld({ cleanups, storeDir: dir.path, opsSink: `secret: "${WEBHOOK_SECRET}"` });
    const lines: string[] = [];
    const logger = pino({ level: "info" }, new Writable({ write: (chunk: Buffer, _encoding, callback) => void (lines.push(chunk.toString("utf8")), callback()) }));
    const daemon = await world.start({ common: { logger } });
    await world.round(daemon);
    // The history's entries belong to a sink no longer configured: that notice, and nothing else, before the damage.
    const notices = world.received();
    expect(notices.map((alert) => alert.labels?.kind)).toEqual(["sink_removed_pending"]);

    // Damage under the running daemon: the history's pages in the middle of the file.
    const size = statSync(world.storePath).size;
    const fd = openSync(world.storePath, "r+");
    writeSync(fd, garbage(4 * PAGE, 7), 0, 4 * PAGE, Math.floor(size / PAGE / 2) * PAGE);
    closeSync(fd);
    // A read meets it (what /status or `kaiawatch outbox` through the daemon would do).
    await expect(daemon.store.listOutbox()).rejects.toMatchObject({ code: "KW_STORE_CORRUPT" });

    // Deliveries wait while the store takes no outcome: the rounds' drains would wait their whole bound.
    const damaged = { drainTimeoutMs: 0 };
    await world.round(daemon, damaged);
    const received = world.received().slice(notices.length);
    expect(received).toEqual([
      expect.objectContaining({ rule: "kaiawatch.operational", status: "firing", summary: expect.stringContaining("kaiawatch: the store file") }) as AlertDocument,
    ]);
    expect(received[0]?.record).toMatchObject({ kind: "store_corrupt", condition: "store_corrupt", path: daemon.store.path });
    expect(received[0]?.summary).toContain("is damaged");
    // Signed as every webhook delivery, under the alert's id.
    const request = world.receiver.requests.filter((r) => r.url === "/ops")[notices.length]!;
    expect(request.headers["webhook-id"]).toBe(received[0]?.id);
    const headers = { "webhook-id": String(request.headers["webhook-id"]), "webhook-timestamp": String(request.headers["webhook-timestamp"]), "webhook-signature": String(request.headers["webhook-signature"]) };
    expect(() => new Webhook(WEBHOOK_SECRET).verify(request.body, headers)).not.toThrow();

    // Once per process: later checks send nothing more, and do not fail on the writes they no longer try.
    const checkFailures = () => lines.filter((line) => line.includes("cannot check kaiawatch's own health")).length;
    const failuresBefore = checkFailures();
    await world.round(daemon, damaged);
    await world.round(daemon, damaged);
    await daemon.health.check();
    expect(world.received()).toHaveLength(notices.length + 1);
    expect(checkFailures()).toBe(failuresBefore);
    const log = lines.map((line) => JSON.parse(line) as { msg: string; sink?: string; level: number });
    expect(log.filter((line) => line.msg === "alert sent directly (the outbox cannot take it)")).toEqual([expect.objectContaining({ sink: "ops" })]);
    // /readyz's verdict still says so.
    expect((await daemon.health.evaluate()).problems).toEqual([expect.objectContaining({ check: "store", kind: "store_corrupt" })]);
  });
});
