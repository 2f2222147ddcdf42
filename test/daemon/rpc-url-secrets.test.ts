import { EventEmitter, once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createTestCommon } from "../../src/common/common.js";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { loadConfig, parseConfigText, type Config } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { OPERATIONAL_EPISODES } from "../../src/daemon/operational-monitor.js";
import { createSimulator } from "../../src/simulator/index.js";
import { readMeta } from "../../src/store/meta-slot.js";
import { logCapture, memoryIO, tempDir } from "../helpers/harness.js";
import { busyTokenToOut } from "../helpers/simulator-config.js";

/**
 * Issue 29, item 6: a hosted JSON-RPC endpoint carries its key in the path and the query of
 * `chain.rpc_url`, and gateways echo the request line in their error pages. That echo used
 * to reach the log and the unauthenticated /readyz (status.token guards only /status and
 * /metrics). The daemon is wired as `kaiawatch run` wires it (the config's secrets to the
 * scrubber), its clock injected, and its ticks and health checks driven by hand.
 */
const PATH_KEY = "9f3cSECRET0a1b2c3d4e5f";
const QUERY_KEY = "qsSECRET42abc";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A gateway that refuses every call and quotes the path and query it was asked for. */
async function echoingGateway(): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    res.writeHead(403, { "content-type": "text/plain" });
    res.end(`Forbidden: no project for ${req.url ?? ""}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A daemon wired as `kaiawatch run` wires it (the config's secrets to the scrubber before it
 * starts), logging at debug level into `capture`; `failFor()` runs a tick and a health check,
 * moves the clock past a minute and runs both again, so that a failure seen in the first
 * becomes its condition (source_failing_after: 1m).
 */
async function startAsRun(loaded: { config: Config; secrets: string[] }): Promise<{ daemon: Daemon; capture: ReturnType<typeof logCapture>; failFor: () => Promise<void> }> {
  const redactor = createSecretRedactor();
  for (const secret of loaded.secrets) redactor.add(secret);
  const capture = logCapture();
  let offset = 0;
  const common = createTestCommon({ logger: createLogger({ level: "debug", redactor, destination: capture.destination }), secrets: redactor, now: () => Date.now() + offset });
  const daemon = await createDaemon(common, { config: loaded.config });
  cleanups.push(() => daemon.stop());
  await daemon.start();
  const round = async () => {
    await daemon.engine.runOnce().catch(() => undefined);
    await daemon.health.check();
  };
  return {
    daemon,
    capture,
    async failFor() {
      await round();
      offset += 61_000;
      await round();
    },
  };
}

describe("a provider key in chain.rpc_url", () => {
  it("reaches neither the log nor /readyz, even with status.token set", async () => {
    const sim = await createSimulator({ initialBlocks: 20 });
    cleanups.push(() => sim.close());
    const gateway = await echoingGateway();
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const { daemon, capture, failFor } = await startAsRun(
      parseConfigText(
      `
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0 }
chain: { rpc_url: "${gateway}/v3/${PATH_KEY}?apikey=${QUERY_KEY}", lag_blocks: 0, request_deadline: 2s }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: "127.0.0.1:0", token: "status-token-0123456789" }
operational: { source_failing_after: 1m }
${busyTokenToOut(sim, `schedule: "0 0 0 1 1 *", start: latest`)}
sinks:
  out: { type: console }
`,
      { fileName: "test.yaml", env: {}, checks: CONFIG_CHECKS },
      ),
    );
    await failFor();

    const readyz = await fetch(`${daemon.statusUrl()}/readyz`);
    const body = await readyz.text();
    // The head read really failed, with the gateway's answer, and /readyz says so.
    expect(readyz.status).toBe(503);
    expect(body).toContain("Forbidden");
    expect(body).not.toContain("SECRET");
    const lines = capture.lines.map((line) => JSON.stringify(line));
    expect(lines.some((line) => line.includes("Forbidden"))).toBe(true);
    expect(lines.filter((line) => line.includes("SECRET"))).toEqual([]);
  });
});

/*
 * Issue 41, secrets: the explorer's 401 quotes the bearer key it refused (`Invalid token:
 * Bearer …`), and a node asked at a path it does not serve quotes the path (`The url(/v2/KEY)
 * does not exists.`). Both texts become operational alerts (source_failing, head_unreachable)
 * sent to the sinks marked operational, which used to carry them as they came; and a key of
 * fewer than 16 characters in rpc_url's path was not known as one at all. Keys here are
 * short, with `_` and `-`, shaped like no key; the daemon is wired as `kaiawatch run` wires it
 * (the config's secrets to the one scrubber), its clock injected, its ticks and health checks
 * driven by hand, and a real HTTP receiver on 127.0.0.1 is its operational sink.
 */
const API_KEY = "Kx_7-Qm2pR";

/** A webhook receiver that takes everything; `alerts` emits each body's conditions as they arrive. */
async function receiver(): Promise<{ url: string; bodies: string[]; alerts: EventEmitter }> {
  const bodies: string[] = [];
  const alerts = new EventEmitter();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      bodies.push(body);
      res.writeHead(204).end();
      alerts.emit("alert", body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/ops`, bodies, alerts };
}

/** Resolves once the receiver has had an alert whose body mentions each of `kinds`. */
async function received(hook: Awaited<ReturnType<typeof receiver>>, kinds: string[]): Promise<void> {
  const missing = () => kinds.filter((kind) => !hook.bodies.some((body) => body.includes(`"kind":"${kind}"`)));
  while (missing().length > 0) await once(hook.alerts, "alert");
}

describe("keys echoed by the endpoints' error bodies", () => {
  // 6 and 15 characters, letters, digits, `_` and `-`: below looksLikeKey's 16, and no shape of a key.
  it.each(["q_7-Zx", "Ab3_x-9Qm2_k-7p"])("the API key and the node key %s reach no log line, /readyz, /status, kaiawatch status, stored or sent alert", async (nodeKey) => {
    const sim = await createSimulator({ initialBlocks: 20, apiKey: "the-right-key-0000", rpcPath: `/v2/${nodeKey}`, faults: { unauthorizedQuotesToken: true } });
    cleanups.push(() => sim.close());
    const hook = await receiver();
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const path = join(dir.path, "config.yaml");
    writeFileSync(
      path,
      `
explorer: { base_url: "${sim.url}", api_key: "${API_KEY}", requests_per_second: 1000, max_retries: 0 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, request_deadline: 2s }
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: "127.0.0.1:0", token: "status-token-0123456789" }
operational: { source_failing_after: 1m }
${busyTokenToOut(sim, `schedule: "0 0 0 1 1 *", start: ${sim.head() - 5}`)}
sinks:
  out: { type: console }
  ops: { type: webhook, url: "${hook.url}", allow_http: true, operational: true }
`,
    );
    const { daemon, capture, failFor } = await startAsRun(await loadConfig({ path, env: {}, checks: CONFIG_CHECKS }));
    // The explorer refuses the key (the head is read): source_failing. Then the node revokes its key: head_unreachable.
    await failFor();
    sim.setFaults({ rpcPath: "/v2/another-key" });
    await failFor();
    await received(hook, ["source_failing", "head_unreachable"]);

    const readyz = await (await fetch(`${daemon.statusUrl()}/readyz`)).text();
    const status = await (await fetch(`${daemon.statusUrl()}/status`, { headers: { authorization: "Bearer status-token-0123456789" } })).text();
    const io = memoryIO();
    expect(await main(["status", "--config", path, "--url", daemon.statusUrl()!], io)).toBe(1);
    const stored = JSON.stringify([await daemon.store.listOutbox(), await readMeta(daemon.store, OPERATIONAL_EPISODES)]);
    const lines = capture.lines.map((line) => JSON.stringify(line));
    const places = { logs: lines.join("\n"), readyz, status, cli: io.out() + io.err(), stored, sent: hook.bodies.join("\n") };

    // The endpoints really answered with the echoes, and every place shows what they said.
    for (const [place, text] of Object.entries(places)) {
      if (place !== "readyz" && place !== "cli") expect(text, place).toContain("Invalid token: Bearer [redacted]");
      expect(text, place).toMatch(/The url\(\[redacted\]\) does not exists|\/v2\/\[redacted\]/);
    }
    for (const [place, text] of Object.entries(places)) {
      expect(text.includes(API_KEY), `${place} holds the API key`).toBe(false);
      expect(text.includes(nodeKey), `${place} holds the node key`).toBe(false);
    }
  });
});
