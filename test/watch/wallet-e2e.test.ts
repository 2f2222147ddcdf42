import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { EVENTS, padAddress, uint256Hex } from "../../src/simulator/abi.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { readJsonLines, tempDir } from "../helpers/harness.js";
import { simulatorHead, writeConfig } from "../helpers/simulator-config.js";
import { startKaiawatch, waitFor, type Child } from "../helpers/child.js";

/**
 * Issue 18 end to end, with the real `kaiawatch run` against the simulator: token transfers
 * of a hot wallet over three tokens (decimals 18, 6 and 0) with thresholds exact to the last
 * unit, and a fee payer's balance that crosses its threshold, fires once, survives a
 * SIGKILL, and resolves once after the restart.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-wallet-");
const children: Child[] = [];

beforeAll(async () => {
  sim = await createSimulator({ seed: 18, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
});
afterAll(async () => {
  for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
  await sim.close();
  dir.remove();
});

const HOT = "0x00000000000000000000000000000000000a11e7";
const PAYER = "0x00000000000000000000000000000000000fee00";
const OTHER = "0x00000000000000000000000000000000000b0b00";

const transfer = (token: string, from: string, to: string, value: bigint) => ({
  contract_address: token,
  type: "Transfer",
  topics: [EVENTS.transfer20.topic0, padAddress(from), padAddress(to)],
  data: `0x${uint256Hex(value)}`,
  items: [],
});
const pay = (from: string, to: string, kaia: string) => ({ from, to, amount: kaia, type: "CALL", transaction_status: { status: "Success" as const } });

describe("a hot wallet and a fee payer, with the real daemon", () => {
  it("alerts token transfers exact to the last unit, and a balance fires once and resolves once across a SIGKILL", async () => {
    const [wkaia, usdt, , stk] = sim.addresses.tokens as [string, string, string, string];
    const alertsPath = join(dir.path, "alerts.jsonl");
    sim.addBlock({ internalTransactions: [pay(OTHER, PAYER, "150")] });
    const configPath = writeConfig(
      dir.path,
      `
${simulatorHead(sim, { storePath: join(dir.path, "store.json"), requestsPerSecond: 500 })}
defaults: { schedule: "* * * * * *", start: ${sim.head() + 1}, jitter: 0s }
watches:
  - { name: hot, account: "${HOT}", tokens: ["${wkaia}", "${usdt}", "${stk}"] }
  - { name: payer, balance: ["${PAYER}"] }
rules:
  - { name: usdt-out, watch: hot, notify: [out], when: { direction: out, amount: { gte: "50000 USDT" } } }
  - { name: wkaia-in, watch: hot, notify: [out], when: { direction: in, amount: { gte: "1.000000000000000001 WKAIA" } } }
  - { name: stk-any, watch: hot, notify: [out], when: { amount: { gte: "7 STK" } } }
  - { name: payer-low, watch: payer, notify: [out], clear_after: 2, when: { balance: { lt: "100 KAIA" } } }
sinks:
  out: { type: file, path: "${alertsPath}" }
`,
    );
    sim.addBlock({
      eventLogs: [
        transfer(usdt, HOT, OTHER, 49_999_999_999n),
        transfer(usdt, HOT, OTHER, 50_000_000_000n),
        transfer(wkaia, OTHER, HOT, 10n ** 18n),
        transfer(wkaia, OTHER, HOT, 10n ** 18n + 1n),
        transfer(stk, HOT, OTHER, 6n),
        transfer(stk, OTHER, HOT, 7n),
        transfer(stk, OTHER, OTHER, 700n),
      ],
    });
    const alerts = () => readJsonLines<AlertDocument>(alertsPath);
    const run = () => {
      const child = startKaiawatch(["run", "--config", configPath, "--log-level", "warn", "--log-format", "json"]);
      children.push(child);
      return child;
    };

    let child = run();
    await waitFor(() => alerts().length >= 3, 30_000, `three token alerts (${child.stderr()})`);
    const tokenAlerts = alerts()
      .map((a) => [a.rule, a.token?.amount])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(tokenAlerts).toEqual([
      ["stk-any", "7"],
      ["usdt-out", "50000"],
      ["wkaia-in", "1.000000000000000001"],
    ]);

    sim.addBlock({ internalTransactions: [pay(PAYER, OTHER, "50.000000000000000001")] });
    await waitFor(() => alerts().some((a) => a.rule === "payer-low"), 30_000, "the balance alert");
    child.process.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");

    sim.addBlock({ internalTransactions: [pay(OTHER, PAYER, "0.000000000000000001")] }); // exactly 100 KAIA
    child = run();
    await waitFor(() => alerts().some((a) => a.status === "resolved"), 30_000, `the resolved alert (${child.stderr()})`);
    // Three more readings above the threshold (counted, not waited for by the clock): nothing more.
    const readings = () => sim.stats().rpcMethods.eth_getBalance ?? 0;
    const resolvedAt = readings();
    await waitFor(() => readings() >= resolvedAt + 3, 15_000, "three more readings");
    child.process.kill("SIGTERM");
    expect((await child.exited).code).toBe(0);

    const balance = alerts().filter((a) => a.rule === "payer-low");
    const firing = balance.filter((a) => a.status === "firing");
    const resolved = balance.filter((a) => a.status === "resolved");
    expect(new Set(firing.map((a) => a.id)).size).toBe(1);
    expect(new Set(resolved.map((a) => a.id)).size).toBe(1);
    expect(resolved[0]?.id).toBe(`${firing[0]?.id}:resolved`);
    expect(firing[0]?.record).toMatchObject({ balance: "99.999999999999999999" });
    expect(resolved[0]?.record).toMatchObject({ balance: "100" });
    // Token alerts: one id each, however often a crash made them delivered.
    expect(new Set(alerts().filter((a) => a.source === "event_logs").map((a) => a.id)).size).toBe(3);
  });
});
