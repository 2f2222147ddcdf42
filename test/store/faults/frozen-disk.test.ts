import { join } from "node:path";
import { Writable } from "node:stream";
import { Worker } from "node:worker_threads";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createStallBeacon } from "../../../src/common/stall-beacon.js";
import { createDaemon } from "../../../src/daemon/create-daemon.js";
import { createSimulator } from "../../../src/simulator/index.js";
import { configFromText, quietCommon, tempDir } from "../../helpers/harness.js";

/**
 * A frozen disk (issue 29, item 9): a store write that does not return. better-sqlite3 is
 * synchronous, so the write holds the daemon's main thread, and before, every endpoint of the
 * status server, /healthz included, stopped answering instead of failing. Now the listening
 * socket is held by a thread of its own, which answers /healthz and /readyz with 503 once a
 * write has held the main thread longer than status.frozen_after (30 s by default).
 *
 * The write really holds the main thread: an injected store fault waits (Atomics.wait) inside
 * the commit. The clock is the beacon's virtual one, moved past the bound by the probing
 * thread while the main thread waits: nothing here waits 30 s. The probes run on a thread of
 * their own (this thread is the one held) and release the write when they have their answers.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve().then(cleanup).catch(() => undefined);
});

const START_MS = Date.parse("2026-11-27T12:00:00.000Z");
const FROZEN_AFTER_MS = 30_000;
/** How long a probe waits for an answer: past it, "no answer" (what every endpoint gave before). */
const PROBE_TIMEOUT_MS = 3_000;

interface ProbeAnswer {
  path: string;
  status: number | "no answer";
  body: string;
}

/**
 * The probing thread: waits until the main thread is held in the write (control[0] = 1), moves
 * the beacon's clock past the bound, asks each path once on a new connection, then releases
 * the write (control[1] = 1) and posts what it got.
 */
const PROBE = `
const { parentPort, workerData } = require("node:worker_threads");
const { url, control, beacon, clockSlot, at, paths, timeoutMs } = workerData;
const flags = new Int32Array(control);
(async () => {
  const answers = [];
  try {
    if (Atomics.wait(flags, 0, 0, 20000) === "timed-out") throw new Error("the main thread never entered the write");
    Atomics.store(new BigInt64Array(beacon), clockSlot, BigInt(at));
    for (const path of paths) {
      try {
        const answer = await fetch(url + path, { signal: AbortSignal.timeout(timeoutMs), headers: { connection: "close" } });
        answers.push({ path, status: answer.status, body: await answer.text() });
      } catch {
        answers.push({ path, status: "no answer", body: "" });
      }
    }
  } finally {
    Atomics.store(flags, 1, 1);
    Atomics.notify(flags, 1);
  }
  parentPort.postMessage(answers);
})().catch((error) => parentPort.postMessage(String(error)));
`;

describe("a frozen disk", () => {
  it("a write that holds the main thread past status.frozen_after makes /healthz and /readyz answer 503 (from the front door's thread), and the daemon answers as before once it returns", async () => {
    const sim = await createSimulator({ initialBlocks: 20 });
    cleanups.push(() => sim.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "kaiawatch.db")} }
status: { listen: "127.0.0.1:0" }
defaults: { schedule: "0 0 0 1 1 *", start: latest, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: token-logs, watch: token, notify: [out] }
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`);
    expect(config.status.frozen_after).toBe(FROZEN_AFTER_MS);

    const lines: string[] = [];
    const logger = pino({ level: "warn" }, new Writable({ write: (chunk: Buffer, _encoding, callback) => void (lines.push(chunk.toString("utf8")), callback()) }));
    const beacon = createStallBeacon({ virtualClock: { startMs: START_MS }, frozenAfterMs: config.status.frozen_after, logger });
    // The frozen disk: the next commit after arming waits until the probes release it.
    const control = new Int32Array(new SharedArrayBuffer(8));
    let armed = false;
    const storeFaults = {
      inCommit() {
        if (!armed) return;
        armed = false;
        Atomics.store(control, 0, 1);
        Atomics.notify(control, 0);
        Atomics.wait(control, 1, 0, 20_000);
      },
    };
    const daemon = await createDaemon(quietCommon(), { config, beacon, storeFaults });
    cleanups.push(() => daemon.stop());
    await daemon.start();
    const url = daemon.statusUrl()!;

    // While the main thread turns, the daemon answers as before.
    const before = await fetch(`${url}/healthz`);
    expect([before.status, await before.text()]).toEqual([200, "ok\n"]);

    const probe = new Worker(PROBE, {
      eval: true,
      workerData: { url, control: control.buffer, beacon: beacon.buffer, clockSlot: 2, at: START_MS + FROZEN_AFTER_MS + 1_000, paths: ["/healthz", "/readyz", "/status"], timeoutMs: PROBE_TIMEOUT_MS },
    });
    cleanups.push(() => probe.terminate().then(() => undefined));
    const answers = new Promise<ProbeAnswer[] | string>((resolve) => probe.once("message", resolve));

    armed = true;
    // Held in its commit until the probes have their answers.
    await daemon.store.setMeta("frozen-disk-test", 1);
    const got = await answers;
    expect(got, typeof got === "string" ? got : undefined).not.toBeTypeOf("string");
    const byPath = Object.fromEntries((got as ProbeAnswer[]).map((answer) => [answer.path, answer]));

    const since = new Date(START_MS).toISOString();
    expect(byPath["/healthz"]).toEqual({
      path: "/healthz",
      status: 503,
      body: `not answering: a store write has held kaiawatch for 31 s (since ${since}; status.frozen_after is 30 s): the disk under the store may be frozen\n`,
    });
    expect(byPath["/readyz"]?.status).toBe(503);
    const readiness = JSON.parse(byPath["/readyz"]!.body) as { ready: boolean; reasons: string[]; checks: Record<string, { ok: boolean }> };
    expect(readiness.ready).toBe(false);
    expect(readiness.reasons).toEqual([expect.stringMatching(/^store: a store write has held kaiawatch for 31 s/)]);
    expect(readiness.checks.store?.ok).toBe(false);
    // The rest says the daemon is not answering rather than hanging.
    expect(byPath["/status"]?.status).toBe(503);
    expect(JSON.parse(byPath["/status"]!.body)).toEqual({ error: expect.stringContaining("kaiawatch is not answering: a store write has held kaiawatch") });

    // The write returned: the daemon answers again, and the log says how long it was held.
    const after = await fetch(`${url}/healthz`);
    expect([after.status, await after.text()]).toEqual([200, "ok\n"]);
    expect(lines.map((line) => JSON.parse(line) as { msg: string; held_ms: number })).toEqual([
      expect.objectContaining({ held_ms: FROZEN_AFTER_MS + 1_000, msg: expect.stringContaining("a store write held kaiawatch for 31 s (longer than status.frozen_after)") }),
    ]);
  });
});
