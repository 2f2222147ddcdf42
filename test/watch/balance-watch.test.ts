import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { EVENTS, padAddress, uint256Hex } from "../../src/simulator/abi.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";

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

async function setup(): Promise<{ sim: Simulator; start: () => Promise<Daemon>; alerts: () => AlertDocument[] }> {
  const sim = await createSimulator({ seed: 12, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  cleanups.push(() => sim.close());
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const usdt = sim.addresses.tokens[1] as string;
  const text = `
explorer: { base_url: ${sim.url}, requests_per_second: 100000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", jitter: 0s }
watches:
  - { name: payer, balance: ["${PAYER}"], tokens: ["${usdt}"] }
rules:
  - { name: payer-low, watch: payer, notify: [out], clear_after: 2, when: { balance: { lt: "100 KAIA" } } }
  - { name: payer-usdt-low, watch: payer, notify: [out], clear_after: 1, when: { balance: { lt: "0.000001 USDT" } } }
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
});
