import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { createDaemonStatus } from "../../src/status/daemon-status.js";
import { createStatusServer } from "../../src/status/status-server.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";
import { startReceiver } from "../notify/receiver.js";

/**
 * /readyz sampled every 200 ms of the daemon's (injected) clock through a 5xx storm, a recovery
 * and a sink outage. Ticks (one a second), checks and deliveries are driven by the test, so the
 * outcome never waits on the wall clock. The rule (README "Readiness"): a source is retrying
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
    const sim = await createSimulator({ initialBlocks: 30 });
    cleanups.push(() => sim.close());
    let sinkDown = false;
    const receiver = await startReceiver((res) => {
      res.statusCode = sinkDown ? 503 : 200;
      res.end(sinkDown ? "down" : "ok");
    });
    cleanups.push(() => receiver.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    let offset = 0;
    // The daemon's clock: the real one (timers and deadlines inside need it to move) shifted by the test.
  const now = () => Date.now() + offset;
    const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: false }
operational: { source_failing_after: ${FAILING_AFTER_MS / 1000}s, sink_pending_age: ${PENDING_AGE_MS / 1000}s }
defaults: { schedule: "0 0 0 1 1 *", start: latest, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: token-logs, watch: token, notify: [out] }
sinks:
  out: { type: webhook, url: "${receiver.url}/out", allow_http: true, max_attempts: 1000 }
`);
    const common = quietCommon({ now });
    const daemon: Daemon = await createDaemon(common, { config });
    cleanups.push(() => daemon.stop());
    const provider = createDaemonStatus(common, {
      sources: daemon.plan.sources,
      store: daemon.store,
      engine: daemon.engine,
      dispatcher: daemon.dispatcher,
      meter: daemon.client.meter,
      head: { state: () => ({ block: sim.head(), read_at: new Date(now()).toISOString(), error: null }) },
      budget: daemon.budget,
      health: daemon.health,
    });
    const server = await createStatusServer(common, { listen: { host: "127.0.0.1", port: 0 }, provider });
    cleanups.push(() => server.close());

    /** 200 ms of the daemon's clock, then one /readyz; every fifth sample a tick (one a second), a check and the deliveries. */
    let sample = 0;
    const step = async (): Promise<{ at: number; status: number; body: string }> => {
      offset += 200;
      sample += 1;
      if (sample % 5 === 0) {
        sim.mine(1);
        await daemon.engine.runOnce().catch(() => undefined);
        await daemon.health.check();
        await daemon.dispatcher.drain({ timeoutMs: 300 });
      }
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
