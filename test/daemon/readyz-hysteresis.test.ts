import { afterEach, describe, expect, it } from "vitest";
import type { Daemon } from "../../src/daemon/create-daemon.js";
import { createDaemonStatus } from "../../src/status/daemon-status.js";
import { createStatusServer } from "../../src/status/status-server.js";
import { quietCommon } from "../helpers/harness.js";
import { operationalWorld } from "../helpers/operational-world.js";

/**
 * /readyz sampled every 200 ms of the daemon's (injected) clock through a 5xx storm, a recovery
 * and a sink outage. Ticks (one a second), checks and deliveries are driven by the test, so the
 * outcome never waits on the wall clock. The rule (docs/operations.md, "Readiness"): a source is retrying
 * until its ticks have failed for `source_failing_after`, then failing (503) until ONE tick
 * succeeds; a sink is stalled (503) while its oldest pending alert is older than
 * `sink_pending_age`. Retrying and catching up stay 200.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const FAILING_AFTER_MS = 10_000;
const PENDING_AGE_MS = 20_000;

describe("/readyz with hysteresis", () => {
  it("does not flap through a 5xx storm, a recovery and a sink outage, and answers 503 within the documented time", async () => {
    let sinkDown = false;
    const w = await operationalWorld({
      cleanups,
      operational: `source_failing_after: ${FAILING_AFTER_MS / 1000}s, sink_pending_age: ${PENDING_AGE_MS / 1000}s`,
      outSink: "max_attempts: 1000",
      outStatus: () => (sinkDown ? 503 : 200),
      withoutOpsSink: true,
    });
    const { sim } = w;
    const common = quietCommon({ now: w.now });
    const daemon: Daemon = await w.start();
    const provider = createDaemonStatus(common, {
      sources: daemon.plan.sources,
      store: daemon.store,
      engine: daemon.engine,
      dispatcher: daemon.dispatcher,
      meter: daemon.client.meter,
      head: { state: () => ({ block: sim.head(), read_at: new Date(w.now()).toISOString(), error: null }) },
      budget: daemon.budget,
      health: daemon.health,
    });
    const server = await createStatusServer(common, { listen: { host: "127.0.0.1", port: 0 }, provider });
    cleanups.push(() => server.close());

    /** 200 ms of the daemon's clock, then one /readyz; every fifth sample a tick (one a second), a check and the deliveries. */
    let sample = 0;
    const step = async (): Promise<{ at: number; status: number; body: string }> => {
      w.advance(200);
      sample += 1;
      if (sample % 5 === 0) await w.round(daemon, { drainTimeoutMs: 300 });
      const res = await fetch(`${server.url}/readyz`);
      // Positions in the test's own time (200 ms a sample), so no assertion depends on the wall clock.
      return { at: sample * 200, status: res.status, body: await res.text() };
    };
    const phase = async (samples: number) => {
      const out = [];
      for (let i = 0; i < samples; i++) out.push(await step());
      return out;
    };
    /** How many times the answer changed within a phase. */
    const flips = (answers: Array<{ status: number }>) => answers.filter((a, i) => i > 0 && a.status !== answers[i - 1]!.status).length;

    // Healthy: 200 throughout.
    const healthy = await phase(25);
    expect(healthy.map((a) => a.status).every((s) => s === 200)).toBe(true);

    // A 5xx storm: 200 (retrying) until the ticks have failed for FAILING_AFTER_MS, then 503 for good.
    sim.setFaults({ serverErrorRate: 1 });
    const stormStart = sample * 200;
    const storm = await phase(100);
    expect(flips(storm)).toBe(1);
    const first503 = storm.find((a) => a.status === 503)!;
    // Within the threshold plus one tick interval of the first failed tick.
    expect(first503.at - stormStart).toBeLessThanOrEqual(FAILING_AFTER_MS + 1_000 + 200);
    expect(first503.at - stormStart).toBeGreaterThanOrEqual(FAILING_AFTER_MS);
    expect(first503.body).toMatch(/sources: source token .* is failing/);

    // Recovery: the first successful tick makes it 200, and it stays there.
    sim.setFaults({ serverErrorRate: 0 });
    const recovery = await phase(25);
    expect(flips(recovery)).toBe(1);
    expect(recovery.slice(5).every((a) => a.status === 200)).toBe(true);

    // A sink outage: 200 while alerts wait less than PENDING_AGE_MS, then 503 naming the sink.
    sinkDown = true;
    const outage = await phase(150);
    expect(flips(outage)).toBe(1);
    const stalled = outage.find((a) => a.status === 503)!;
    expect(stalled.body).toMatch(/sinks: sink out: its oldest pending alert/);

    // The sink comes back: still 503 until the retries (in backoff) have delivered the old
    // alerts, never back and forth.
    sinkDown = false;
    const back = await phase(40);
    expect(flips(back)).toBeLessThanOrEqual(1);
    expect(back.at(-1)!.status === 200 || back.every((a) => a.status === 503)).toBe(true);
  });
});
