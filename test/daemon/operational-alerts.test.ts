import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { OPERATIONAL_RULE } from "../../src/daemon/operational-monitor.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";
import { startReceiver, type Receiver } from "../notify/receiver.js";

/**
 * kaiawatch's alerts about itself, end to end in-process: the simulator as explorer and chain,
 * a real webhook receiver as the operational sink. The daemon's clock is injected and shifted
 * by the test, and ticks, checks and deliveries are driven by hand (no timers started), so no
 * outcome waits on the wall clock.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface World {
  sim: Simulator;
  receiver: Receiver;
  advance(ms: number): void;
  start(): Promise<Daemon>;
  /** The operational alerts the receiver got, in order. */
  received(): AlertDocument[];
}

async function world(options: { outRefuses?: () => boolean } = {}): Promise<World> {
  const sim = await createSimulator({ initialBlocks: 30 });
  cleanups.push(() => sim.close());
  // /ops always accepts; /out refuses (400, a permanent error: a dead letter) while outRefuses says so.
  const receiver = await startReceiver((res, req) => {
    const refuse = req.url === "/out" && (options.outRefuses?.() ?? false);
    res.statusCode = refuse ? 400 : 200;
    res.end(refuse ? "no" : "ok");
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
operational: { source_failing_after: 2m, sink_pending_age: 10m }
defaults: { schedule: "0 0 0 1 1 *", start: latest, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: token-logs, watch: token, notify: [out] }
sinks:
  out: { type: webhook, url: "${receiver.url}/out", allow_http: true }
  ops: { type: webhook, url: "${receiver.url}/ops", allow_http: true, operational: true }
`);
  return {
    sim,
    receiver,
    advance(ms) {
      offset += ms;
    },
    async start() {
      const daemon = await createDaemon(quietCommon({ now }), { config });
      const stopOnce = daemon.stop.bind(daemon);
      let stopped = false;
      const stop = async () => {
        if (stopped) return;
        stopped = true;
        await stopOnce();
      };
      cleanups.push(stop);
      return Object.assign(daemon, { stop });
    },
    received: () => receiver.requests.filter((request) => request.url === "/ops").map((request) => JSON.parse(request.body) as AlertDocument),
  };
}

/** One round as the daemon's timers would do it: a pass over the sources, a health check, the deliveries. */
async function round(daemon: Daemon, sim: Simulator): Promise<void> {
  // A new block each round, so every pass has a window to fetch (and, with the fault, to fail).
  sim.mine(1);
  await daemon.engine.runOnce().catch(() => undefined);
  await daemon.health.check();
  await daemon.dispatcher.drain({ timeoutMs: 5_000 });
}

describe("operational alerts", () => {
  it("a failing source: retrying first (no alert), then one firing alert with a stable id, nothing repeated across a restart, one resolved alert", async () => {
    const w = await world();
    let daemon = await w.start();
    await round(daemon, w.sim);
    expect((await daemon.health.evaluate()).sources.map((s) => s.state)).toEqual(["ok"]);

    w.sim.setFaults({ maintenance: true });
    await round(daemon, w.sim);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("retrying");
    expect(w.received()).toEqual([]);

    w.advance(60_000);
    await round(daemon, w.sim);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("retrying");
    w.advance(61_000);
    await round(daemon, w.sim);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("failing");
    const [firing] = w.received();
    expect(w.received()).toHaveLength(1);
    expect(firing).toMatchObject({ rule: OPERATIONAL_RULE, status: "firing", record: { kind: "source_failing" } });

    // Still failing: nothing more, and a restart neither resolves nor repeats it.
    w.advance(30_000);
    await round(daemon, w.sim);
    await daemon.stop();
    daemon = await w.start();
    await round(daemon, w.sim);
    w.advance(30_000);
    await round(daemon, w.sim);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("failing");
    expect(w.received()).toHaveLength(1);

    // One successful tick: ok again, and one resolved alert in the same id family.
    w.sim.setFaults({ maintenance: false });
    await round(daemon, w.sim);
    expect((await daemon.health.evaluate()).sources[0]!.state).toBe("ok");
    await round(daemon, w.sim);
    expect(w.received().map((a) => [a.id, a.status])).toEqual([
      [firing!.id, "firing"],
      [`${firing!.id}:resolved`, "resolved"],
    ]);
    // The webhook carries the alert id as its webhook-id: the receiver can tie the two together.
    expect(w.receiver.requests.filter((r) => r.url === "/ops").map((r) => r.headers["webhook-id"])).toEqual([firing!.id, `${firing!.id}:resolved`]);

    // A restart after it cleared sends nothing again.
    await daemon.stop();
    daemon = await w.start();
    await round(daemon, w.sim);
    await round(daemon, w.sim);
    expect(w.received()).toHaveLength(2);
  });

  it("dead letters: one firing alert when they appear, one resolved alert once they are requeued and delivered", async () => {
    let refusing = true;
    const w = await world({ outRefuses: () => refusing });
    const daemon = await w.start();
    await round(daemon, w.sim); // the first pass starts at the head: no alerts yet
    for (let i = 0; i < 3 && (await daemon.store.countOutbox({ state: "dead" })) === 0; i++) {
      w.sim.mine(5);
      await round(daemon, w.sim);
    }
    expect(await daemon.store.countOutbox({ state: "dead" })).toBeGreaterThan(0);
    await round(daemon, w.sim);
    const firing = w.received().filter((a) => (a.record as { kind: string }).kind === "dead_letters");
    expect(firing).toHaveLength(1);
    expect(firing[0]).toMatchObject({ status: "firing", rule: OPERATIONAL_RULE });

    refusing = false;
    await daemon.dispatcher.retry({ all: true });
    await daemon.dispatcher.drain({ timeoutMs: 5_000 });
    await round(daemon, w.sim);
    await round(daemon, w.sim);
    const deadAlerts = w.received().filter((a) => (a.record as { kind: string }).kind === "dead_letters");
    expect(deadAlerts.map((a) => [a.id, a.status])).toEqual([
      [firing[0]!.id, "firing"],
      [`${firing[0]!.id}:resolved`, "resolved"],
    ]);
  });
});
