import { afterEach, describe, expect, it } from "vitest";
import { describe as describeStatus, type StatusBody } from "../../src/cli/commands/status.js";
import type { Daemon } from "../../src/daemon/create-daemon.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { createDaemonStatus } from "../../src/status/daemon-status.js";
import { createStatusServer } from "../../src/status/status-server.js";
import { operationalWorld, type OperationalWorld } from "../helpers/operational-world.js";
import { quietCommon } from "../helpers/harness.js";

/**
 * Issue 41: a 401 or 403 is not a transient failure. At the first such answer (no
 * `source_failing_after` to wait through: it is the default 2 minutes here, and the clock does
 * not move) /readyz is not ready naming the setting to change, `kaiawatch status` shows the
 * source's last error and the condition, and one operational alert says so; the same for the
 * node and `chain.rpc_url`. The explorer's 401 quotes the key it refused: it appears nowhere.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const WRONG_KEY = "wrong_key-7Zq";

async function statusText(w: OperationalWorld, daemon: Daemon) {
  const common = quietCommon({ now: w.now });
  common.secrets.add(WRONG_KEY);
  const provider = createDaemonStatus(common, {
    sources: daemon.plan.sources,
    store: daemon.store,
    engine: daemon.engine,
    dispatcher: daemon.dispatcher,
    meter: daemon.client.meter,
    head: { state: () => ({ block: w.sim.head(), read_at: new Date(w.now()).toISOString(), error: null }) },
    budget: daemon.budget,
    health: daemon.health,
  });
  const server = await createStatusServer(common, { listen: { host: "127.0.0.1", port: 0 }, provider });
  cleanups.push(() => server.close());
  // /readyz and /status as the status server serves them (scrubbed), and the CLI's text of /status.
  const readyz = await fetch(`${server.url}/readyz`);
  const readiness = (await readyz.json()) as { ready: boolean; checks: Record<string, { ok: boolean; detail: string } | undefined> };
  expect(readyz.status).toBe(503);
  const status = (await (await fetch(`${server.url}/status`)).json()) as StatusBody;
  return { readiness, text: describeStatus({ url: server.url, ready: status.ready, status }) };
}

describe("credentials refused", () => {
  it("the explorer's 401: not ready, in status and in one operational alert at once, naming explorer.api_key", async () => {
    const w = await operationalWorld({ cleanups, simulator: { apiKey: "the-right-key-123" }, explorer: `api_key: "${WRONG_KEY}"` });
    w.sim.setFaults({ unauthorizedQuotesToken: true });
    // The config's secrets registered, as `kaiawatch run` registers them.
    const secrets = createSecretRedactor();
    secrets.add(WRONG_KEY);
    const daemon = await w.start({ common: { secrets } });
    // The first round places the cursor at the head (start: latest); the second reads the explorer.
    await w.round(daemon);
    await w.round(daemon);

    const { readiness, text } = await statusText(w, daemon);
    expect(readiness.ready).toBe(false);
    expect(readiness.checks.credentials?.ok).toBe(false);
    expect(readiness.checks.credentials?.detail).toMatch(/^the explorer refuses explorer\.api_key: 1 source \(token\) cannot be read until it is changed/);
    expect(readiness.checks.credentials?.detail).toContain("KW_EXPLORER_KEY_REFUSED");

    expect(text).toContain("NOT READY");
    expect(text).toMatch(/not ready: credentials: the explorer refuses explorer\.api_key/);
    expect(text).toMatch(/last error of src_\w+ \(token\): KW_EXPLORER_KEY_REFUSED: accountEventLogs: HTTP 401 \(UNAUTHORIZED_ACCESS: Invalid token: Bearer \[redacted\]\): the explorer refuses explorer\.api_key/);
    expect(text).toContain("Condition firing: credentials_refused: the explorer refuses explorer.api_key");

    const alerts = w.received();
    expect(alerts.map((alert) => (alert.record as { kind: string }).kind)).toEqual(["credentials_refused"]);
    expect(alerts[0]!.summary).toMatch(/^kaiawatch: the explorer refuses explorer\.api_key: /);
    expect(alerts[0]!.record).toMatchObject({ setting: "explorer.api_key", head: false });

    for (const shown of [JSON.stringify(readiness), text, JSON.stringify(alerts)]) expect(shown).not.toContain(WRONG_KEY);
  });

  it("the node's 401: not ready and one operational alert at once, naming chain.rpc_url", async () => {
    const w = await operationalWorld({ cleanups });
    w.front.refusal = { status: 401, body: '{"error":"invalid api key"}' };
    const daemon = await w.start();
    await w.round(daemon);

    const readiness = await statusText(w, daemon).then((read) => read.readiness);
    expect(readiness.ready).toBe(false);
    expect(readiness.checks.credentials?.detail).toMatch(/^the node refuses chain\.rpc_url: the chain head cannot be read until it is changed/);
    expect(readiness.checks.credentials?.detail).toMatch(/KW_RPC_REFUSED: eth_blockNumber at 127\.0\.0\.1:\d+: HTTP 401 \(\{"error":"invalid api key"\}\): the node refuses chain\.rpc_url's credentials/);
    const alerts = w.received();
    expect(alerts.map((alert) => (alert.record as { kind: string }).kind)).toEqual(["credentials_refused"]);
    expect(alerts[0]!.record).toMatchObject({ setting: "chain.rpc_url", head: true });

    // Accepted again: the condition clears at the next check, with its resolved alert.
    w.front.refusal = undefined;
    await w.round(daemon);
    expect(w.received().map((alert) => `${(alert.record as { kind: string }).kind} ${alert.status}`)).toEqual(["credentials_refused firing", "credentials_refused resolved"]);
  });
});
