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
 * Issue 39, item 3: the JSON-RPC client used to borrow the explorer's transport, so a node
 * that answered 5xx or refused the connection was logged and shown in /readyz as
 * KW_EXPLORER_HTTP or KW_EXPLORER_NETWORK: an operator read a node outage as the explorer's.
 * The daemon is wired as `kaiawatch run` wires it, its clock injected, its ticks and health
 * checks driven by hand; the explorer (the simulator) answers all along.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A node behind a gateway that answers every call 503. */
async function failingNode(): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    res.writeHead(503, { "content-type": "text/plain" });
    res.end("node down for maintenance");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An address where nothing listens: a port a server had, closed before the daemon starts. */
async function refusingNode(): Promise<string> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

async function readyzAndLogs(rpcUrl: string): Promise<{ status: number; body: string; headLines: Array<Record<string, unknown>> }> {
  const sim = await createSimulator({ initialBlocks: 20 });
  cleanups.push(() => sim.close());
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const { config, secrets } = parseConfigText(
    `
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0 }
chain: { rpc_url: "${rpcUrl}", lag_blocks: 0, request_deadline: 2s }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: "127.0.0.1:0" }
operational: { source_failing_after: 1m }
${busyTokenToOut(sim, `schedule: "0 0 0 1 1 *", start: latest`)}
sinks:
  out: { type: console }
`,
    { fileName: "test.yaml", env: {}, checks: CONFIG_CHECKS },
  );
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
  const headLines = capture.lines.filter((line) => String(line.msg).startsWith("cannot read the chain head"));
  return { status: readyz.status, body: await readyz.text(), headLines };
}

describe("a node failure is the node's", () => {
  it("a 5xx from the node is KW_RPC_HTTP in the log line and in /readyz, never an explorer code", async () => {
    const { status, body, headLines } = await readyzAndLogs(await failingNode());
    expect(status).toBe(503);
    const readiness = JSON.parse(body) as { checks: Record<string, { ok: boolean; detail: string }> };
    expect(readiness.checks.head?.ok).toBe(false);
    expect(readiness.checks.head?.detail).toMatch(/KW_RPC_HTTP: eth_blockNumber at 127\.0\.0\.1:\d+: HTTP 503 \(node down for maintenance\)/);
    expect(body).not.toContain("KW_EXPLORER");
    expect(headLines.length).toBeGreaterThan(0);
    for (const line of headLines) {
      expect(line.code).toBe("KW_RPC_HTTP");
      expect(String(line.err)).not.toContain("EXPLORER");
    }
  });

  it("a refused connection is KW_RPC_NETWORK in the log line and in /readyz", async () => {
    const { status, body, headLines } = await readyzAndLogs(await refusingNode());
    expect(status).toBe(503);
    const readiness = JSON.parse(body) as { checks: Record<string, { ok: boolean; detail: string }> };
    expect(readiness.checks.head?.detail).toMatch(/KW_RPC_NETWORK: eth_blockNumber at 127\.0\.0\.1:\d+: network error \(ECONNREFUSED/);
    expect(body).not.toContain("KW_EXPLORER");
    expect(headLines.length).toBeGreaterThan(0);
    for (const line of headLines) expect(line.code).toBe("KW_RPC_NETWORK");
  });
});
