import type { ServerResponse } from "node:http";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { ConfigError, parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { startReceiver } from "../notify/receiver.js";
import { startKaiawatch, waitFor } from "../helpers/child.js";
import { startLocalFront } from "../helpers/local-front.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";
import { simulatorHead } from "../helpers/simulator-config.js";
import { observeFor } from "../helpers/wait-for.js";

/**
 * The dead man's switch (issue 31, item 5): a `heartbeat` sink pings a receiver on 127.0.0.1
 * while kaiawatch is ready and stops within one interval of a SIGKILL (a real process) and of
 * a wedged tick (in-process: the beats are run by hand on the daemon's injected clock, so the
 * only wall-clock wait is the tick's own deadline).
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The explorer API in front of the simulator; while `wedged` it takes requests and never answers. */
async function wedgeFront(target: string): Promise<{ url: string; wedged: boolean; close(): Promise<void> }> {
  const held: ServerResponse[] = [];
  const state = { wedged: false };
  const front = await startLocalFront(target, (_req, res) => {
    if (!state.wedged) return false;
    held.push(res);
    return true;
  });
  return Object.assign(state, front);
}

describe("heartbeat sink", () => {
  it("is refused in a rule's notify: and as an operational sink, with the key path", () => {
    const text = `
explorer: { base_url: https://example.com }
chain: { rpc_url: https://example.com }
watches: [ { name: token, contract: "0x0000000000000000000000000000000000000001" } ]
rules: [ { name: r, watch: token, notify: [beat] } ]
sinks:
  beat: { type: heartbeat, url: "https://hc-ping.com/secret-uuid", operational: true }
`;
    let error: unknown;
    try {
      parseConfigText(text, { fileName: "c.yaml", env: {}, checks: CONFIG_CHECKS });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const formatted = (error as ConfigError).format();
    expect(formatted).toMatch(/rules\[0\]\.notify\[0\].*heartbeat sink/);
    expect(formatted).toMatch(/sinks\.beat\.operational/);
    expect(formatted).not.toContain("secret-uuid");
  });

  it("pings while ready and stops at the first beat after a wedged tick turns /readyz not ready", async () => {
    const sim = await createSimulator({ initialBlocks: 30 });
    cleanups.push(() => sim.close());
    const front = await wedgeFront(sim.url);
    cleanups.push(() => front.close());
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    let offset = 0;
    const now = () => Date.now() + offset;
    const config = configFromText(`
explorer: { base_url: ${front.url}, requests_per_second: 1000, max_retries: 0 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: false }
operational: { source_failing_after: 30s }
defaults: { schedule: "0 0 0 1 1 *", start: latest, jitter: 0s, tick_timeout: 300ms }
watches: [ { name: token, contract: "${sim.addresses.busyToken}" } ]
rules: [ { name: token-logs, watch: token, notify: [out] } ]
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
  beat: { type: heartbeat, url: "${receiver.url}/ping/abc", interval: 10s, method: POST, allow_http: true }
`);
    const daemon = await createDaemon(quietCommon({ now }), { config });
    cleanups.push(() => daemon.stop());
    const [beat] = daemon.heartbeats;
    const pings = () => receiver.requests.filter((request) => request.url === "/ping/abc").length;

    // Healthy: every beat (one interval of the daemon's clock each) pings.
    for (let i = 0; i < 3; i += 1) {
      sim.mine(1);
      await daemon.engine.runOnce();
      offset += 10_000;
      expect(await beat!.beat()).toEqual({ pinged: true, status: 200 });
    }
    expect(pings()).toBe(3);
    expect(receiver.requests[0]!.method).toBe("POST");

    // Wedged: the explorer takes the request and never answers; the tick is aborted at tick_timeout.
    front.wedged = true;
    sim.mine(1);
    await daemon.engine.runOnce().catch(() => undefined);
    // Retrying is still ready (docs/operations.md): the beats go on until the source is failing.
    offset += 10_000;
    expect((await beat!.beat()).pinged).toBe(true);
    // The streak passes source_failing_after (30 s) during the next intervals: /readyz says 503,
    // and the first beat after it does not ping.
    let beatsAfterNotReady = 0;
    for (let i = 0; i < 4; i += 1) {
      offset += 10_000;
      const outcome = await beat!.beat();
      if (!outcome.pinged) {
        expect(outcome).toEqual({ pinged: false, reason: "not_ready" });
        beatsAfterNotReady += 1;
      }
    }
    expect(beatsAfterNotReady).toBeGreaterThan(0);
    const heard = pings();
    expect(heard).toBeLessThanOrEqual(6);

    // Unwedged: one successful tick and the pings resume.
    front.wedged = false;
    sim.mine(1);
    await daemon.engine.runOnce();
    offset += 10_000;
    expect((await beat!.beat()).pinged).toBe(true);
    expect(pings()).toBe(heard + 1);
  });

  it("a real kaiawatch run pings every interval and goes silent within one interval of a SIGKILL", async () => {
    const sim = await createSimulator({ initialBlocks: 30, blockTime: 1000 });
    cleanups.push(() => sim.close());
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const INTERVAL_MS = 300;
    const configPath = join(dir.path, "config.yaml");
    writeFileSync(
      configPath,
      `
${simulatorHead(sim, { storePath: join(dir.path, "store.json") })}
defaults: { schedule: "* * * * * *", start: latest }
watches: [ { name: token, contract: "${sim.addresses.busyToken}" } ]
rules: [ { name: token-logs, watch: token, notify: [out] } ]
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
  beat: { type: heartbeat, url: "${receiver.url}/ping", interval: ${INTERVAL_MS}ms, timeout: 200ms, allow_http: true }
`,
    );
    const child = startKaiawatch(["run", "--config", configPath, "--log-level", "warn", "--log-format", "json"]);
    cleanups.push(() => void child.process.kill("SIGKILL"));
    const arrivals: number[] = [];
    receiver.reply = (res) => {
      arrivals.push(performance.now());
      res.end("OK");
    };
    await waitFor(() => arrivals.length >= 3, 15_000, `three pings (stderr: ${child.stderr()})`);
    expect(receiver.requests.every((request) => request.method === "GET")).toBe(true);
    child.process.kill("SIGKILL");
    const killedAt = performance.now();
    await child.exited;
    const heardBefore = arrivals.length;
    // One interval and some: a ping on the wire at the kill may still land; none may come after.
    await observeFor(INTERVAL_MS * 2);
    const late = arrivals.filter((at) => at > killedAt + 50);
    expect(late).toEqual([]);
    expect(arrivals.length - heardBefore).toBeLessThanOrEqual(1);
  });
});
