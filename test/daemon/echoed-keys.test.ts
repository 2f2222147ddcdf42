import { once, EventEmitter } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createTestCommon } from "../../src/common/common.js";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { loadConfig } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { OPERATIONAL_EPISODES } from "../../src/daemon/operational-monitor.js";
import { createSimulator } from "../../src/simulator/index.js";
import { readMeta } from "../../src/store/meta-slot.js";
import { logCapture, memoryIO, tempDir } from "../helpers/harness.js";
import { busyTokenToOut } from "../helpers/simulator-config.js";

/**
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

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

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
    const { config, secrets } = await loadConfig({ path, env: {}, checks: CONFIG_CHECKS });
    // As run.ts: the scrubber knows every secret of the config before the daemon starts.
    const redactor = createSecretRedactor();
    for (const secret of secrets) redactor.add(secret);
    const capture = logCapture();
    let offset = 0;
    const common = createTestCommon({ logger: createLogger({ level: "debug", redactor, destination: capture.destination }), secrets: redactor, now: () => Date.now() + offset });
    const daemon = await createDaemon(common, { config });
    cleanups.push(() => daemon.stop());
    await daemon.start();

    // The explorer refuses the key (the head is read): source_failing, a minute on.
    await daemon.engine.runOnce().catch(() => undefined);
    await daemon.health.check();
    offset += 61_000;
    await daemon.engine.runOnce().catch(() => undefined);
    await daemon.health.check();
    // Then the node revokes its key: head_unreachable, a minute on.
    sim.setFaults({ rpcPath: "/v2/another-key" });
    await daemon.engine.runOnce().catch(() => undefined);
    await daemon.health.check();
    offset += 61_000;
    await daemon.engine.runOnce().catch(() => undefined);
    await daemon.health.check();
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
