import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { logCapture, tempDir } from "../helpers/harness.js";
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

describe("a provider key in chain.rpc_url", () => {
  it("reaches neither the log nor /readyz, even with status.token set", async () => {
    const sim = await createSimulator({ initialBlocks: 20 });
    cleanups.push(() => sim.close());
    const gateway = await echoingGateway();
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const { config, secrets } = parseConfigText(
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
    );
    // As run.ts: the scrubber knows every secret of the config before the daemon starts.
    const redactor = createSecretRedactor();
    for (const secret of secrets) redactor.add(secret);
    const capture = logCapture();
    let offset = 0;
    const common = createTestCommon({ logger: createLogger({ level: "debug", redactor, destination: capture.destination }), secrets: redactor, now: () => Date.now() + offset });
    const daemon = await createDaemon(common, { config });
    cleanups.push(() => daemon.stop());
    await daemon.start();

    await daemon.engine.runOnce().catch(() => undefined);
    await daemon.health.check();
    offset += 61_000;
    await daemon.engine.runOnce().catch(() => undefined);
    await daemon.health.check();

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
