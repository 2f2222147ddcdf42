import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import type { DrainResult } from "../../src/notify/dispatcher.js";
import type { Simulator } from "../../src/simulator/index.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { startReceiver, type Receiver } from "./receiver.js";
import { addNftTransfers, emptyChain, nftTransfersTo } from "./e2e-support.js";

/**
 * One sink down for a whole run and a restart: its alerts wait in the outbox (not dead, not
 * lost) while the other sinks deliver theirs; when it comes back, it gets every alert, each
 * once per id, and the other sinks get nothing twice.
 */
let sim: Simulator;
let primary: Receiver;
let backup: Receiver;
let backupUp = false;
const dir = tempDir("kaiawatch-e2e-outage-");
const filePath = join(dir.path, "alerts.jsonl");
let configText = "";

beforeAll(async () => {
  sim = await emptyChain(13);
  primary = await startReceiver((res) => res.writeHead(204).end());
  backup = await startReceiver((res) => (backupUp ? res.writeHead(204).end() : res.writeHead(503).end("maintenance")));
  const start = addNftTransfers(sim, 5);
  configText = `
${nftTransfersTo(sim, { dir: dir.path, start, notify: ["primary", "backup", "archive"] })}
sinks:
  primary: { type: webhook, url: "${primary.url}/hook", allow_http: true }
  backup: { type: webhook, url: "${backup.url}/hook", allow_http: true }
  archive: { type: file, path: "${filePath}" }
`;
});

afterAll(async () => {
  await primary?.close();
  await backup?.close();
  await sim?.close();
  dir.remove();
});

/** One `once` of the real daemon on the shared store; `laterMs` moves its clock on (time passing while the sink was down). */
async function once(drainTimeoutMs: number, laterMs = 0): Promise<{ delivery: DrainResult; outbox: OutboxEntry[] }> {
  const daemon = await createDaemon(quietCommon({ now: () => Date.now() + laterMs }), { config: configFromText(configText) });
  try {
    const { delivery } = await daemon.runOnce({ drainTimeoutMs });
    return { delivery, outbox: (await daemon.store.listOutbox()) };
  } finally {
    await daemon.stop();
  }
}

const accepted = (receiver: Receiver, up: () => boolean = () => true) => receiver.requests.filter(up).map((r) => String(r.headers["webhook-id"]));

describe("a sink that is down", () => {
  it("keeps its alerts waiting while the others deliver, through a restart, then gets everything once per id", async () => {
    // Run 1: backup is down for the whole run.
    const first = await once(1500);
    expect(first.delivery.dead).toBe(0);
    expect(accepted(primary)).toHaveLength(5);
    expect(readJsonLines(filePath)).toHaveLength(5);
    const waiting = first.outbox.filter((e) => e.sink === "backup");
    expect(waiting).toHaveLength(5);
    for (const entry of waiting) {
      expect(entry.state).toBe("pending");
      expect(entry.attempts).toBeGreaterThanOrEqual(1);
      expect(entry.last_error).toContain("503");
    }
    expect(first.delivery.pending).toBe(5);

    // Run 2, after a restart: more alerts, backup still down.
    addNftTransfers(sim, 3);
    const second = await once(1500);
    expect(second.delivery.dead).toBe(0);
    expect(accepted(primary)).toHaveLength(8);
    expect(readJsonLines(filePath)).toHaveLength(8);
    expect(second.outbox.filter((e) => e.sink === "backup" && e.state === "pending")).toHaveLength(8);
    const failedAttempts = backup.requests.length;
    expect(failedAttempts).toBeGreaterThanOrEqual(8);

    // Run 3: backup is back, some minutes later (every backoff has run out).
    backupUp = true;
    const third = await once(20_000, 10 * 60_000);
    expect(third.delivery).toMatchObject({ delivered: 8, dead: 0, pending: 0, timedOut: false });
    const backupIds = backup.requests.slice(failedAttempts).map((r) => String(r.headers["webhook-id"]));
    const primaryIds = accepted(primary);
    expect(backupIds).toHaveLength(8);
    expect(new Set(backupIds).size).toBe(8);
    expect([...backupIds].sort()).toEqual([...primaryIds].sort());
    // Nothing twice anywhere else.
    expect(new Set(primaryIds).size).toBe(8);
    const archived = readJsonLines(filePath).map((a) => a.id);
    expect(archived).toHaveLength(8);
    expect([...archived].sort()).toEqual([...primaryIds].sort());
    expect(third.outbox.every((e) => e.state === "delivered")).toBe(true);
  });
});
