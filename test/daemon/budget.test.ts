import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { OPERATIONAL_RULE } from "../../src/daemon/operational-monitor.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator } from "../../src/simulator/index.js";
import { waitFor } from "../helpers/child.js";
import { configFromText, quietCommon, readJsonLines, recordKeyOf, repeated, tempDir } from "../helpers/harness.js";
import { observeFor } from "../helpers/wait-for.js";

/**
 * The daily credit budget end to end, in-process against the simulator: its operational
 * alerts (credits_low at 80%, credits_exhausted when spent) fire once each to the operational
 * sinks only, polling pauses (no request at all, one log line), a restart that day stays
 * paused and repeats nothing, and the next UTC day resolves both once and resumes from the
 * cursor without skipping a block. The daemon's clock is shifted to noon UTC of a
 * fixed day (and later one day on), so the test never depends on the real time of day.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const BUDGET = 30; // ten requests of operation 11 (3 credits each)

describe("daily credit budget", () => {
  it("warns at 80%, pauses when spent, remembers across a restart, and resumes the next UTC day without a gap", async () => {
    const sim = await createSimulator({ initialBlocks: 30 });
    cleanups.push(() => sim.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    let offset = Date.UTC(2030, 0, 15, 12) - Date.now();
    const now = () => Date.now() + offset;
    const logLines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logLines.push(...chunk.toString().split("\n").filter(Boolean));
        callback();
      },
    });
    const common = () => quietCommon({ now, logger: createLogger({ level: "info", redactor: createSecretRedactor(), destination }) });

    const token = sim.addresses.busyToken;
    const first = sim.head() - 7; // 8 blocks, one window each: 24 credits, 80% of the budget
    const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, daily_credit_budget: ${BUDGET} }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: false }
operational: { check_interval: 250ms }
defaults: { schedule: "* * * * * *", start: ${first}, max_window_blocks: 1, jitter: 0s }
watches:
  - { name: token, contract: "${token}" }
rules:
  - { name: token-logs, watch: token, notify: [out] }
sinks:
  out: { type: file, path: ${join(dir.path, "out.jsonl")} }
  ops: { type: file, path: ${join(dir.path, "ops.jsonl")}, operational: true }
`);
    const opsAlerts = () => readJsonLines<AlertDocument>(join(dir.path, "ops.jsonl"));
    const outAlerts = () => readJsonLines<AlertDocument>(join(dir.path, "out.jsonl"));

    const startDaemon = async (): Promise<Daemon> => {
      const daemon = await createDaemon(common(), { config });
      cleanups.push(() => daemon.stop());
      await daemon.start();
      return daemon;
    };

    let daemon = await startDaemon();
    await waitFor(async () => (await daemon.store.getCursor(daemon.plan.sources[0]!.key))?.block === sim.head(), 10_000, "the first catch-up");
    expect(daemon.client.meter.spentToday()).toBe(24);
    await waitFor(() => opsAlerts().length === 1, 10_000, "the 80% alert");
    expect(opsAlerts()[0]).toMatchObject({ rule: OPERATIONAL_RULE, watch: "kaiawatch", status: "firing", record: { kind: "credits_low", spent: 24, budget: BUDGET, resets_at: "2030-01-16T00:00:00.000Z" } });
    expect(opsAlerts()[0]?.summary).toContain("80%");

    // Five more blocks: two fit in the budget, the third request would pass it.
    sim.mine(5);
    await waitFor(() => opsAlerts().length === 2, 10_000, "the exhaustion alert");
    expect(opsAlerts()[1]).toMatchObject({ rule: OPERATIONAL_RULE, status: "firing", record: { kind: "credits_exhausted", spent: BUDGET, resumes_at: "2030-01-16T00:00:00.000Z" } });
    expect(daemon.client.meter.spentToday()).toBe(BUDGET);
    expect(daemon.budget.state().paused_until).toBe("2030-01-16T00:00:00.000Z");
    const pausedAt = (await daemon.store.getCursor(daemon.plan.sources[0]!.key))!.block;
    expect(pausedAt).toBe(sim.head() - 3);

    // Paused: no tick runs, so neither the API nor the node is asked anything.
    const requestsBefore = JSON.stringify(sim.stats().requests);
    sim.mine(3);
    await observeFor(3_000);
    expect(JSON.stringify(sim.stats().requests)).toBe(requestsBefore);
    expect(logLines.filter((line) => line.includes("polling paused"))).toHaveLength(1);
    expect(logLines.filter((line) => line.includes("tick failed"))).toHaveLength(0);

    // A restart the same day: still spent (the meter and the pause are in the store), paused
    // from the start without asking the explorer, and no alert again, neither fired nor resolved.
    await daemon.stop();
    const requestsAtRestart = JSON.stringify(sim.stats().requests);
    daemon = await startDaemon();
    expect(daemon.budget.state().paused_until).toBe("2030-01-16T00:00:00.000Z");
    await observeFor(1_500); // ticks and health checks come and go
    expect(JSON.stringify(sim.stats().requests)).toBe(requestsAtRestart);
    expect(opsAlerts()).toHaveLength(2);
    expect((await daemon.store.listOutbox({ sink: "ops" }))).toHaveLength(2);

    // The UTC day turns: polling resumes where the cursor stayed and catches up.
    offset += 12 * 3600_000; // from noon to just after 00:00 UTC
    expect(new Date(now()).toISOString()).toMatch(/^2030-01-16T00:0/);
    await waitFor(async () => (await daemon.store.getCursor(daemon.plan.sources[0]!.key))?.block === sim.head(), 10_000, "the catch-up on the new day");
    expect(daemon.budget.state().paused_until).toBeNull();
    expect(daemon.client.meter.spentToday()).toBe(3 * (sim.head() - pausedAt));
    expect(logLines.some((line) => line.includes("polling resumes"))).toBe(true);

    // No gap, no duplicate: every record of every block since `first`, once.
    await waitFor(() => outAlerts().length === sim.truth.accountEventLogs(token, { from: first, to: sim.head() }).length, 10_000, "every alert delivered");
    const keys = outAlerts().map(recordKeyOf);
    expect(repeated(keys)).toEqual([]);
    expect(outAlerts().every((alert) => alert.rule === "token-logs")).toBe(true);
    // The new day resolved both conditions, once each, in their id families.
    await waitFor(() => opsAlerts().length === 4, 10_000, "the resolved alerts");
    const [low, exhausted] = opsAlerts();
    expect(opsAlerts().slice(2).map((a) => [a.id, a.status]).sort()).toEqual([
      [`${low!.id}:resolved`, "resolved"],
      [`${exhausted!.id}:resolved`, "resolved"],
    ].sort());
  });
});
