import { describe, expect, it } from "vitest";
import { describe as describeStatus, type StatusBody } from "../../src/cli/commands/status.js";
import { formatPlan } from "../../src/cli/commands/plan.js";
import { sourceViews } from "../../src/status/source-views.js";
import { planCredits } from "../../src/watch/credit-plan.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { configFromText } from "../helpers/harness.js";
import { HOT_WALLET } from "../rules/fixtures.js";

/**
 * Issue 41: a watch that shares its source with another (a router beside a hot wallet, both on
 * FREE's every-block scan of internal transactions, operation 8) is listed with the source that
 * serves it in the `plan` table, /status's sources (the page reads `watches`) and `kaiawatch status`.
 */
const ROUTER = "0x00000000000000000000000000000000000000aa";
const config = configFromText(`
explorer: { base_url: "http://127.0.0.1:9", api_plan: FREE }
chain: { rpc_url: "http://127.0.0.1:9", explorer_url: "https://kaiascan.io" }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *" }
watches:
  - { name: hot-wallet, account: "${HOT_WALLET}", sources: [internal_transactions] }
  - { name: router, account: "${ROUTER}", sources: [internal_transactions] }
rules:
  - { name: hot-calls, watch: hot-wallet, notify: [out] }
  - { name: router-calls, watch: router, notify: [out] }
sinks:
  out: { type: console }
`);

describe("every watch with the source that serves it", () => {
  const plan = planFromConfig(config);
  it("one source serves both watches", () => {
    expect(plan.sources).toHaveLength(1);
  });

  it("in the plan table", () => {
    const text = formatPlan(planCredits(config, { dayMs: Date.UTC(2026, 0, 5) }), config, "config.yaml", { wide: true });
    expect(text).toMatch(/^\s*hot-wallet, router\s/m);
  });

  it("in /status and kaiawatch status", () => {
    const sources = sourceViews({ sources: plan.sources, states: [], cursors: new Map(), health: [], headBlock: null, replicas: undefined, replicaId: undefined, holderOf: new Map() });
    expect(sources.map((source) => source.watches)).toEqual([["hot-wallet", "router"]]);
    const status: StatusBody = { ready: true, reasons: [], uptime_seconds: 1, head: { block: 1 }, health: { worst: "starting", conditions: [] }, sources: sources.map((s) => ({ ...s, holder: null })), sinks: {}, now: new Date().toISOString() };
    const text = describeStatus({ url: "http://127.0.0.1:9464", ready: true, status });
    expect(text).toMatch(new RegExp(`${plan.sources[0]!.key}\\s+hot-wallet, router\\s`));
  });
});
