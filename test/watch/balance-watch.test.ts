import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { EVENTS, padAddress, uint256Hex } from "../../src/simulator/abi.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { simulatorHead } from "../helpers/simulator-config.js";

/**
 * A balance watch fires when its condition starts to hold and resolves once it has not
 * held for clear_after readings in a row: one alert each, not one per reading, across a
 * restart on the same store.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PAYER = "0x00000000000000000000000000000000000fee00";
const FUNDER = "0x00000000000000000000000000000000000f0f00";

const DEFAULT_RULES = `
  - { name: payer-low, watch: payer, notify: [out], clear_after: 2, when: { balance: { lt: "100 KAIA" } } }
  - { name: payer-usdt-low, watch: payer, notify: [out], clear_after: 1, when: { balance: { lt: "0.000001 USDT" } } }`;

async function setup(rules = DEFAULT_RULES): Promise<{ sim: Simulator; start: () => Promise<Daemon>; alerts: () => AlertDocument[] }> {
  const sim = await createSimulator({ seed: 12, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  cleanups.push(() => sim.close());
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const usdt = sim.addresses.tokens[1] as string;
  const text = `
${simulatorHead(sim, { storePath: join(dir.path, "store.json"), requestsPerSecond: 100000 })}
defaults: { schedule: "0 0 0 1 1 *", jitter: 0s }
watches:
  - { name: payer, balance: ["${PAYER}"], tokens: ["${usdt}"] }
rules:${rules}
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`;
  const start = async () => {
    const daemon = await createDaemon(quietCommon(), { config: configFromText(text) });
    cleanups.push(() => daemon.stop());
    return daemon;
  };
  return { sim, start, alerts: () => readJsonLines(join(dir.path, "alerts.jsonl")) };
}

const pay = (from: string, to: string, kaia: string) => ({ internalTransactions: [{ from, to, amount: kaia, type: "CALL", transaction_status: { status: "Success" } }] });

describe("a balance watch", () => {
  it("fires once when the balance crosses below the threshold and resolves once after clear_after readings above it, across a restart", async () => {
    const { sim, start, alerts } = await setup();
    const usdt = sim.addresses.tokens[1] as string;
    sim.addBlock(pay(FUNDER, PAYER, "150"));
    sim.addBlock({ eventLogs: [{ contract_address: usdt, type: "Transfer", topics: [EVENTS.transfer20.topic0, padAddress(FUNDER), padAddress(PAYER)], data: `0x${uint256Hex(1n)}`, items: [] }] });
    let daemon = await start();
    await daemon.runOnce();
    expect(alerts()).toEqual([]); // 150 KAIA and 0.000001 USDT: neither condition holds

    sim.addBlock(pay(PAYER, FUNDER, "50.000000000000000001")); // 99.999999999999999999 KAIA: one kei below
    await daemon.runOnce();
    await daemon.runOnce(); // still below: no second alert
    expect(alerts().map((a) => [a.rule, a.status, a.summary])).toEqual([["payer-low", "firing", "balance of 0x0000…ee00 is 99.999999999999999999 KAIA: lt \"100 KAIA\""]]);
    const firing = alerts()[0] as AlertDocument;
    expect(firing.record).toMatchObject({ address: PAYER, asset: "KAIA", balance: "99.999999999999999999", balance_base_units: "99999999999999999999" });

    sim.addBlock(pay(FUNDER, PAYER, "0.000000000000000001")); // exactly 100 KAIA: no longer below
    await daemon.runOnce(); // one reading above: clear_after 2 keeps it firing
    expect(alerts()).toHaveLength(1);
    await daemon.stop();

    daemon = await start(); // the episode continues from the store
    await daemon.runOnce();
    expect(alerts().map((a) => [a.rule, a.id, a.status])).toEqual([
      ["payer-low", firing.id, "firing"],
      ["payer-low", `${firing.id}:resolved`, "resolved"],
    ]);
    await daemon.runOnce();
    expect(alerts()).toHaveLength(2);
  });
});

describe("a balance rule's summary and severity", () => {
  it("renders the rule's template for the firing and the resolved alert, and carries its severity", async () => {
    const { sim, start, alerts } = await setup(`
  - name: payer-low
    watch: payer
    notify: [out]
    clear_after: 1
    severity: critical
    when: { balance: { lt: "100 KAIA" } }
    summary: "{{status}}: fee payer {{address}} holds {{balance}} {{symbol}} ({{condition}}) <b>{{rule}}</b>"`);
    sim.addBlock(pay(FUNDER, PAYER, "99"));
    const daemon = await start();
    await daemon.runOnce();
    sim.addBlock(pay(FUNDER, PAYER, "1"));
    await daemon.runOnce();
    // Plain text in the document: each sink escapes it for its format (<b> stays text).
    expect(alerts().map((a) => [a.status, a.severity, a.summary])).toEqual([
      ["firing", "critical", `firing: fee payer ${PAYER} holds 99 KAIA (lt "100 KAIA") <b>payer-low</b>`],
      ["resolved", "critical", `resolved: fee payer ${PAYER} holds 100 KAIA (lt "100 KAIA") <b>payer-low</b>`],
    ]);
  });
});

describe("balance rules in the config", () => {
  const base = (rules: string, tokens = "") => `
chain: { rpc_url: "https://rpc.example" }
status: { listen: false }
watches:
  - { name: payer, balance: ["${PAYER}"]${tokens} }
rules:
${rules}
sinks:
  out: { type: console }
`;
  it("names the key path of a bound without a unit it knows, of a token amount on a KAIA-only watch, and of a rule mixing assets", () => {
    expect(() => configFromText(base(`  - { name: a, watch: payer, notify: [out], when: { balance: { below: "1 KAIA" } } }`))).toThrow(/rules\[0\]\.when\.balance\.below: rule "a": unknown operator "below"/);
    expect(() => configFromText(base(`  - { name: a, watch: payer, notify: [out], when: { balance: { lt: "1 USDT" } } }`))).toThrow(/rules\[0\]\.when\.balance\.lt: .*reads KAIA only/);
    expect(() => configFromText(base(`  - { name: a, watch: payer, notify: [out], when: { balance: { lt: "1 KAIA", gt: "1 USDT" } } }`, `, tokens: ["${FUNDER}"]`))).toThrow(/rules\[0\]\.when\.balance: .*one rule reads one asset/);
    expect(() => configFromText(base(`  - { name: a, watch: payer, notify: [out] }`))).toThrow(/rules\[0\]\.when: .*needs a condition on its balance/);
  });

  it("checks a balance rule's summary against the balance variables, and refuses keys a rule would ignore", () => {
    const when = `when: { balance: { lt: "1 KAIA" } }`;
    expect(() => configFromText(base(`  - { name: a, watch: payer, notify: [out], ${when}, summary: "{{balance}} {{symbol}} at {{address}} ({{status}}, {{condition}}) {{link.account}}" }`))).not.toThrow();
    expect(() => configFromText(base(`  - { name: a, watch: payer, notify: [out], ${when}, summary: "{{amount}} left" }`))).toThrow(/rules\[0\]\.summary: unknown variable "\{\{amount\}\}" for balances; variables: .*balance_base_units/);
    expect(() => configFromText(base(`  - { name: a, watch: payer, notify: [out], ${when}, enrich: [tx_logs] }`))).toThrow(/rules\[0\]\.enrich\[0\]: .*this rule reads balances/);
    const recordRule = base(`  - { name: a, watch: payer, notify: [out], ${when} }`).replace("watches:", `watches:\n  - { name: wallet, account: "${FUNDER}" }`) + "";
    expect(() => configFromText(recordRule.replace("rules:\n", `rules:\n  - { name: b, watch: wallet, notify: [out], clear_after: 3 }\n`))).toThrow(/rules\[0\]\.clear_after: rule "b" alerts once per record: clear_after applies to balance rules only/);
  });
});
