import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { memoryIO, tempDir } from "../helpers/harness.js";
import { startReceiver, type Receiver } from "../notify/receiver.js";

/**
 * `kaiawatch doctor` against the simulator as the real service: all green, then each way a
 * first run goes wrong, named on its own line with its fix, and exit 1.
 */
let sim: Simulator;
let receiver: Receiver;
const dir = tempDir("kaiawatch-doctor-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 51, initialBlocks: 40, apiKey: "the-key", plan: "FREE", chainId: 1001, indexingLagBlocks: 1, requestsPerSecond: 500, dailyCreditQuota: 100_000 });
  receiver = await startReceiver((res) => res.end("ok"));
});
afterAll(async () => {
  await receiver.close();
  await sim.close();
  dir.remove();
});

interface Variant {
  network?: string;
  apiPlan?: "FREE" | "PRO_PLUS";
  hookUrl?: string;
  walletSources?: string;
  /** chain.traces. */
  traces?: boolean;
  /** Another simulator than the suite's. */
  sim?: Simulator;
}

function config(v: Variant = {}): string {
  const target = v.sim ?? sim;
  const a = target.addresses;
  const path = join(dir.path, `config-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    path,
    `
explorer: { base_url: "${target.url}", api_key: "\${KAIASCAN_API_KEY}", api_plan: ${v.apiPlan ?? "FREE"} }
chain: { network: ${v.network ?? "kairos"}, rpc_url: "${target.rpcUrl}", lag_blocks: 2, traces: ${v.traces ?? false} }
store: { path: "${join(dir.path, "store.db")}" }
defaults: { schedule: "*/30 * * * * *", start: latest }
sinks:
  hook: { type: webhook, url: "${v.hookUrl ?? `${receiver.url}/hook`}", allow_http: true }
  out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" }
watches:
  - { name: hot-wallet, account: "${a.busyWallet}", sources: [${v.walletSources ?? "nft_transfers"}] }
  - { name: token, contract: "${a.busyToken}", events: ["Transfer(address,address,uint256)"] }
rules:
  - { name: wallet, watch: hot-wallet, notify: [out] }
  - { name: token, watch: token, enrich: [tx_logs], notify: [hook] }
`,
  );
  return path;
}

async function doctor(path: string, key = "the-key", ...more: string[]) {
  const io = memoryIO({ KAIASCAN_API_KEY: key });
  const code = await main(["doctor", "--config", path, ...more], io);
  return { code, out: io.out(), err: io.err() };
}

const line = (out: string, check: string) => out.split("\n").find((l) => l.trimStart().replace(/^(ok|warn|FAIL)\s+/, "").startsWith(check)) ?? "";

describe("kaiawatch doctor", () => {
  it("all green against the simulator: each check on its line, the credits it spent, exit 0", async () => {
    const before = sim.stats().creditsTotal;
    const { code, out } = await doctor(config());
    expect(out).not.toContain("FAIL");
    for (const check of ["store", "chain rpc", "node traces", "explorer", "plan", "operation 3", "operation 11", "operation 10", "indexing lag", "sink hook (webhook)", "sink out (file)"]) expect(line(out, check), check).toMatch(/^\s+ok\s/);
    expect(line(out, "plan")).toContain("quotas 500 requests/s, 100000 a day");
    expect(line(out, "indexing lag")).toMatch(/1 behind the node's head \(chain\.lag_blocks is 2\)/);
    expect(line(out, "operation 11")).toContain("fields beyond the document: none");
    expect(line(out, "node traces")).toMatch(/traces blocks with the call tracer \(block \d+: \d+ transactions?, \d+ calls?\): internal transactions can be read from the node, one request a block \(chain\.traces: true\)$/);
    expect(line(out, "field spelling")).toMatch(/^\s+ok\s+field spelling\s+the explorer answered in snake_case; both spellings are read alike$/);
    const spent = sim.stats().creditsTotal - before;
    expect(out).toContain(`credits spent: ${spent} (`);
    expect(spent).toBeLessThanOrEqual(10);
    expect(out).toContain("all is well");
    expect(code).toBe(0);
  });

  it("an explorer answering in camelCase (as KaiaScan's live documentation shows): all green, and the spelling said", async () => {
    const camel = await createSimulator({ seed: 51, initialBlocks: 40, apiKey: "the-key", plan: "FREE", chainId: 1001, indexingLagBlocks: 1, spelling: "camelCase" });
    try {
      const { code, out } = await doctor(config({ sim: camel }));
      expect(out).not.toContain("FAIL");
      expect(line(out, "operation 11")).toContain("fields beyond the document: none");
      expect(line(out, "field spelling")).toMatch(/^\s+ok\s+field spelling\s+the explorer answered in camelCase; both spellings are read alike$/);
      expect(code).toBe(0);
    } finally {
      await camel.close();
    }
  });

  it("--send puts a test alert through every sink", async () => {
    const before = receiver.requests.length;
    const { code, out } = await doctor(config(), "the-key", "--send");
    expect(line(out, "sink hook (webhook)")).toContain("accepted the test alert");
    expect(receiver.requests.length - before).toBe(1);
    expect(code).toBe(0);
  });

  it("a node without the debug namespace, as public endpoints are: said, not a failure, internal transactions stay with the explorer", async () => {
    sim.setFaults({ debugUnavailable: true });
    try {
      const { code, out } = await doctor(config());
      expect(line(out, "node traces")).toMatch(/^\s+ok\s+node traces\s+.* does not serve debug_traceBlockByNumber \(the method debug_traceBlockByNumber does not exist\/is not available\): internal transactions stay with the explorer$/);
      expect(code).toBe(0);
    } finally {
      sim.setFaults({ debugUnavailable: false });
    }
  });

  it("with chain.traces: a node that traces is ok, one without the debug namespace fails with its fix", async () => {
    const traced = await doctor(config({ traces: true }));
    expect(line(traced.out, "node traces")).toMatch(/^\s+ok\s+node traces\s+.* traces blocks with the call tracer \(block \d+: .*\): the watches with source node or both read their internal transactions from it, one request a block$/);
    expect(traced.code).toBe(0);
    sim.setFaults({ debugUnavailable: true });
    try {
      const { code, out } = await doctor(config({ traces: true }));
      expect(line(out, "node traces")).toMatch(/^\s+FAIL\s+node traces\s+.* does not serve debug_traceBlockByNumber \(.*\), and chain\.traces is true: the watches that read internal transactions from the node get none$/);
      expect(out).toContain("fix: point chain.rpc_url at a node with the debug API (rpc.api debug), or set chain.traces: false to read internal transactions from the explorer");
      expect(code).toBe(1);
    } finally {
      sim.setFaults({ debugUnavailable: false });
    }
  });

  it("a wrong key: named, with its fix, exit 1", async () => {
    const { code, out } = await doctor(config(), "a-wrong-key");
    expect(line(out, "explorer")).toMatch(/^\s+FAIL\s+explorer\s+.*refuses the key \(HTTP 401 UNAUTHORIZED_ACCESS\)/);
    expect(out).toContain("fix: check explorer.api_key");
    expect(out).not.toContain("a-wrong-key");
    expect(code).toBe(1);
  });

  it("a node of another chain than chain.network: named, with its fix, exit 1", async () => {
    const { code, out } = await doctor(config({ network: "mainnet" }));
    expect(line(out, "chain rpc")).toMatch(/FAIL\s+chain rpc\s+.*is chain 1001, but chain\.network is mainnet \(chain 8217\)/);
    expect(out).toContain("fix: point chain.rpc_url at a mainnet node");
    expect(code).toBe(1);
  });

  it("a FREE key with a watch that needs PRO_PLUS: named, with its fix, exit 1", async () => {
    const { code, out } = await doctor(config({ apiPlan: "PRO_PLUS", walletSources: "internal_transactions" }));
    expect(line(out, "plan")).toMatch(/FAIL\s+plan\s+.*refuses operation 7 \(it needs PRO_PLUS\)/);
    expect(out).toContain("fix: set explorer.api_plan: FREE");
    expect(code).toBe(1);
  });

  it("an unreachable sink: named, with its fix, exit 1", async () => {
    const { code, out } = await doctor(config({ hookUrl: "https://alerts.example.invalid/hook" }));
    expect(line(out, "sink hook (webhook)")).toMatch(/FAIL\s+sink hook \(webhook\)\s+alerts\.example\.invalid does not resolve/);
    expect(out).toContain("fix: check sinks.hook.url");
    expect(code).toBe(1);
  });
});
