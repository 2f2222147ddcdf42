import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createOperationalMonitor } from "../../src/daemon/operational-monitor.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator } from "../../src/simulator/index.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";

/**
 * Inhibition (issue 31, item 2), end to end against the simulator on the daemon's injected
 * clock: a balance rule's alert is held back (recorded as inhibited, not sent) while a source
 * of its watch fails, and once the source has resolved the episode's next reminder goes
 * through: inhibited alerts are dropped as Alertmanager drops them, and an episode still
 * firing is heard of again at its repeat_interval (docs/reminders-and-inhibition.md).
 *
 * The failing source is raised by kaiawatch's own operational monitor on the daemon's store,
 * given the condition the health loop would compute (a source failing for minutes is slow to
 * reach through the explorer on a virtual clock, and what inhibition reads is the episode the
 * monitor stores either way).
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PAYER = "0x00000000000000000000000000000000000fee00";
const FUNDER = "0x00000000000000000000000000000000000f0f00";
const OTHER = "0x0000000000000000000000000000000000000abc";
const pay = (from: string, to: string, kaia: string) => ({ internalTransactions: [{ from, to, amount: kaia, type: "CALL", transaction_status: { status: "Success" } }] });

/** A chain with no records but the ones a test adds, and a store folder; both go at the end. */
async function quietChain(seed: number) {
  const sim = await createSimulator({ seed, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  cleanups.push(() => sim.close());
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  return { sim, dir };
}

describe("inhibition", () => {
  it("holds back a wallet's warning while a source of its watch fails, records it, and lets the episode's next reminder through once the source resolves", async () => {
    const { sim, dir } = await quietChain(31);
    const base = Date.parse("2026-03-01T00:00:00.000Z");
    let now = base;
    const text = `
explorer: { base_url: ${sim.url}, requests_per_second: 100000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", jitter: 0s }
watches:
  - { name: payer, balance: ["${PAYER}"] }
  - { name: other, balance: ["${OTHER}"] }
rules:
  - { name: payer-low, watch: payer, severity: warning, notify: [out], repeat_interval: 1m, when: { balance: { lt: "100 KAIA" } } }
  - { name: other-low, watch: other, severity: warning, notify: [out], when: { balance: { lt: "1 KAIA" } } }
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
inhibit_rules:
  - source_matchers: ['kind="source_failing"']
    target_matchers: ['severity="warning"']
    equal: [watch]
`;
    const common = quietCommon({ now: () => now });
    const daemon: Daemon = await createDaemon(common, { config: configFromText(text) });
    cleanups.push(() => daemon.stop());
    const monitor = await createOperationalMonitor(common, { store: daemon.store, sinks: [], network: "mainnet", head: () => 10, onQueued: () => {} });
    const failing = { key: "source_failing:src_payer", kind: "source_failing", summary: "source payer (src_payer) is failing", detail: { source: "src_payer", watch: "payer" } };
    const readingAt = async (seconds: number) => {
      now = base + seconds * 1000;
      await daemon.runOnce({ drainTimeoutMs: 5000 });
    };
    const alerts = () => readJsonLines<AlertDocument>(join(dir.path, "alerts.jsonl"));

    sim.addBlock(pay(FUNDER, PAYER, "150"));
    sim.addBlock(pay(PAYER, FUNDER, "51")); // 99 KAIA: below
    await monitor.update([failing]); // the payer's source fails
    await readingAt(0); // payer-low fires: held back; other-low (another watch) goes
    const held = (await daemon.store.listOutbox({ sink: "out" })).filter((e) => e.rule === "payer-low");
    expect(held.map((e) => [e.alert.repeat, e.state])).toEqual([[0, "delivered"]]);
    expect(await daemon.store.suppressions(held.map((e) => e.id))).toEqual({ [held[0]!.id]: { at: new Date(base).toISOString(), reason: "inhibited" } });
    expect(alerts().map((a) => a.rule)).toEqual(["other-low"]);
    // The delivery history (kaiawatch history) keeps the hold as an attempt, naming the rule and the source.
    const source = monitor.active()[0]!.id;
    expect((await daemon.store.listAttempts({ outcome: "suppressed" })).map((a) => [a.alert_id, a.outcome, a.error])).toEqual([[held[0]!.alert.id, "suppressed", `held back by inhibit_rules[0] while ${source} fires`]]);
    expect(daemon.inhibitor.status()).toMatchObject({ rules: [{ id: "inhibit_rules[0]", held: 1 }], active: [{ rule: "inhibit_rules[0]", labels: { kind: "source_failing", watch: "payer" } }] });

    now = base + 45_000;
    await monitor.update([]); // the source recovers
    await readingAt(60); // the episode still fires: its reminder goes through
    sim.addBlock(pay(FUNDER, PAYER, "50")); // 149 KAIA: it clears (clear_after 2)
    await readingAt(120);
    await readingAt(150);

    const sent = alerts().filter((a) => a.rule === "payer-low");
    const episode = held[0]!.alert.id;
    expect(sent.map((a) => [a.id, a.status, a.repeat, a.episode_id])).toEqual([
      [`${episode}:repeat:1`, "firing", 1, episode],
      [`${episode}:resolved`, "resolved", undefined, episode],
    ]);
    expect(daemon.inhibitor.status().active).toEqual([]);
  });
  it("mutes a wallet's warning while its critical fires (equal: [watch]), and sends the warning's reminder once the critical resolves", async () => {
    const { sim, dir } = await quietChain(32);
    const base = Date.parse("2026-03-01T00:00:00.000Z");
    let now = base;
    const text = `
explorer: { base_url: ${sim.url}, requests_per_second: 100000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: "127.0.0.1:0" }
defaults: { schedule: "0 0 0 1 1 *", jitter: 0s }
watches:
  - { name: payer, balance: ["${PAYER}"] }
rules:
  - { name: payer-empty, watch: payer, severity: critical, notify: [out], when: { balance: { lt: "50 KAIA" } } }
  - { name: payer-low, watch: payer, severity: warning, notify: [out], repeat_interval: 1m, when: { balance: { lt: "100 KAIA" } } }
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
inhibit_rules:
  - source_matchers: ['severity="critical"']
    target_matchers: ['severity="warning"']
    equal: [watch]
`;
    const daemon: Daemon = await createDaemon(quietCommon({ now: () => now }), { config: configFromText(text) });
    cleanups.push(() => daemon.stop());
    const readingAt = async (seconds: number) => {
      now = base + seconds * 1000;
      await daemon.runOnce({ drainTimeoutMs: 5000 });
    };
    const sent = () => readJsonLines<AlertDocument>(join(dir.path, "alerts.jsonl")).map((a) => [a.rule, a.status, a.repeat]);

    sim.addBlock(pay(FUNDER, PAYER, "150"));
    sim.addBlock(pay(PAYER, FUNDER, "110")); // 40 KAIA: both rules fire in one reading
    await readingAt(0);
    expect(sent()).toEqual([["payer-empty", "firing", 0]]); // the warning is held back, recorded
    const warning = (await daemon.store.listOutbox({ sink: "out" })).find((e) => e.rule === "payer-low")!;
    expect(await daemon.store.suppressions([warning.id])).toEqual({ [warning.id]: { at: new Date(base).toISOString(), reason: "inhibited" } });
    // /status (and the page, which draws it) shows the rule, what it held and the critical holding it now.
    await daemon.start();
    const status = (await (await fetch(`${daemon.statusUrl()}/status`)).json()) as { inhibitions: unknown };
    expect(status.inhibitions).toEqual({
      rules: [{ id: "inhibit_rules[0]", source_matchers: ['severity="critical"'], target_matchers: ['severity="warning"'], equal: ["watch"], held: 1 }],
      active: [{ rule: "inhibit_rules[0]", source: expect.stringMatching(/^kw_/), labels: { rule: "payer-empty", severity: "critical", source: "balances", watch: "payer" }, summary: expect.any(String) }],
    });

    sim.addBlock(pay(FUNDER, PAYER, "40")); // 80 KAIA: the critical clears (clear_after 2), the warning still holds
    await readingAt(30);
    await readingAt(45); // the critical resolves
    await readingAt(60); // the warning's first reminder: no critical fires now
    expect(sent()).toEqual([
      ["payer-empty", "firing", 0],
      ["payer-empty", "resolved", undefined],
      ["payer-low", "firing", 1],
    ]);
  });
});
