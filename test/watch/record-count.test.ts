import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { Simulator } from "../../src/simulator/index.js";
import { createDaemon, type Daemon, type DaemonOptions } from "../../src/daemon/create-daemon.js";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { createTestCommon, type Common } from "../../src/common/common.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { alertId } from "../../src/rules/build-alert.js";
import { configFromText, logCapture, quietCommon, recordKeyOf, tempDir } from "../helpers/harness.js";
import { startSimulator } from "../simulator/start.js";

/**
 * Issue 16 parts 2 and 3 against the simulator: two KIP37 transfers identical in every field
 * of one transaction are two alerts whose ids survive re-scans and restarts, and a window
 * whose records disagree with the explorer's total_count is fetched again, or, when it never
 * agrees, fails the tick with the cursor where it was.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function configText(sim: Simulator, storePath: string, start: number, wallet: string): string {
  return `
explorer:
  base_url: ${sim.url}
  requests_per_second: 1000
  page_size: 5
chain:
  rpc_url: ${sim.rpcUrl}
  lag_blocks: 0
store: { path: ${storePath} }
status: { listen: false }
defaults: { start: ${start}, max_window_blocks: 1000, jitter: 0s }
watches:
  - { name: items, collection: "${sim.addresses.kip37Collection}" }
  - { name: wallet, account: "${wallet}", sources: [nft_transfers] }
rules:
  - { name: item-transfers, watch: items, notify: [out] }
  - { name: wallet-nft, watch: wallet, source: nft_transfers, notify: [out] }
sinks:
  out: { type: file, path: ${join(storePath, "..", "alerts.jsonl")} }
`;
}

/** A daemon over its own store directory (reused when `dir` is given: a restart). */
async function daemonFor(sim: Simulator, start: number, wallet: string, options: { dir?: string; common?: Common } & Omit<DaemonOptions, "config"> = {}): Promise<{ daemon: Daemon; dir: string }> {
  let dir = options.dir;
  if (dir === undefined) {
    const made = tempDir();
    cleanups.push(() => made.remove());
    dir = made.path;
  }
  const config = configFromText(configText(sim, join(dir, "store.db"), start, wallet));
  const daemon = await createDaemon(options.common ?? quietCommon(), { config, recount: options.recount });
  cleanups.push(() => daemon.stop());
  return { daemon, dir };
}

const TWIN_HASH = "0x" + "ab".repeat(32);

/** A chain with two identical KIP37 transfers (and a third, different one) in one transaction. */
async function chainWithTwins(seed: number) {
  const sim = await startSimulator({ seed, initialBlocks: 30 });
  const wallet = sim.addresses.wallets[5]!;
  const twin = { transaction_hash: TWIN_HASH, contract: { contract_address: sim.addresses.kip37Collection, contract_type: "KIP37" }, token_id: "42", token_count: "3", from: sim.addresses.wallets[4]!, to: wallet };
  const start = sim.head() + 1;
  sim.mine(3);
  const block = sim.addBlock({ nftTransfers: [twin, twin, { ...twin, token_count: "4" }] });
  sim.mine(3);
  return { sim, wallet, start, block };
}

async function twinAlerts(daemon: Daemon) {
  return (await daemon.store.listOutbox()).filter((entry) => entry.alert.transaction_hash === TWIN_HASH);
}

describe("identical KIP37 transfers in one transaction", () => {
  it("are two alerts with distinct ids, stable across re-scans, restarts and a fresh store", async () => {
    const { sim, wallet, start } = await chainWithTwins(31);
    const first = await daemonFor(sim, start, wallet);
    const once = await first.daemon.engine.runOnce();
    expect(once.results.map((r) => r.error)).toEqual([undefined, undefined]);
    const alerts = (await twinAlerts(first.daemon));
    for (const rule of ["item-transfers", "wallet-nft"]) {
      const ofRule = alerts.filter((a) => a.rule === rule);
      // Three transfers, two of them identical: three alerts, three ids.
      expect(ofRule).toHaveLength(3);
      expect(new Set(ofRule.map((a) => a.alert.id)).size).toBe(3);
      const twins = ofRule.filter((a) => (a.alert.record as { token_count: string }).token_count === "3");
      expect(twins).toHaveLength(2);
      expect(twins[0]!.alert.record).toEqual(twins[1]!.alert.record);
      // The first keeps the id an alert of that record always had.
      expect(twins.map((t) => t.alert.id)).toContain(alertId(rule, recordKeyOf(twins[0]!.alert)));
    }
    const ids = new Set((await first.daemon.store.listOutbox()).map((e) => e.id));

    // A re-scan of the same blocks on the same store adds nothing: the same ids again.
    for (const cursor of (await first.daemon.store.listCursors())) await first.daemon.store.setCursor({ ...cursor, block: start - 1 });
    await first.daemon.engine.runOnce();
    expect(new Set((await first.daemon.store.listOutbox()).map((e) => e.id))).toEqual(ids);
    await first.daemon.stop();

    // A restart on the same store, with new blocks: the twins are not alerted again.
    sim.mine(2);
    const restarted = await daemonFor(sim, start, wallet, { dir: first.dir });
    await restarted.daemon.engine.runOnce();
    const afterRestart = (await restarted.daemon.store.listOutbox()).map((e) => e.id);
    expect(afterRestart.filter((id) => ids.has(id))).toHaveLength(ids.size);
    expect((await twinAlerts(restarted.daemon))).toHaveLength(6);

    // Another store scanning the same chain finds the same ids.
    const fresh = await daemonFor(sim, start, wallet);
    await fresh.daemon.engine.runOnce();
    expect(new Set((await twinAlerts(fresh.daemon)).map((e) => e.id))).toEqual(new Set(alerts.map((e) => e.id)));
  });
});

describe("a window whose records disagree with total_count", () => {
  it("is fetched again until they agree, and every record becomes its alert once", async () => {
    const { sim, wallet, start } = await chainWithTwins(32);
    const { daemon } = await daemonFor(sim, start, wallet, { recount: { baseMs: 0, maxMs: 0 } });
    sim.setFaults({ shortPages: 2 });
    const { head, results } = await daemon.engine.runOnce();
    expect(results.map((r) => r.error)).toEqual([undefined, undefined]);
    expect(sim.stats().faults.shortPage).toBe(2);
    const truth = sim.truth.nftTransfers(sim.addresses.kip37Collection, { from: start, to: head }).map((r) => NORMALIZERS.nft_transfers(r).key);
    const keys = (await daemon.store.listOutbox()).filter((e) => e.rule === "item-transfers").map((e) => recordKeyOf(e.alert));
    // Every transfer once, the twin twice (the same record: counted by key).
    expect(keys.sort()).toEqual(truth.sort());
    for (const cursor of (await daemon.store.listCursors())) expect(cursor.block).toBe(head);
  });

  it("fails the tick with KW_WATCH_COUNT_MISMATCH when they never agree: the cursor stays, and status and logs say why", async () => {
    const { sim, wallet, start } = await chainWithTwins(33);
    const { destination, lines } = logCapture();
    const redactor = createSecretRedactor();
    const common = createTestCommon({ logger: createLogger({ level: "info", redactor, destination }), secrets: redactor });
    const { daemon } = await daemonFor(sim, start, wallet, { common, recount: { retries: 2, baseMs: 0, maxMs: 0 } });
    sim.setFaults({ shortPageRate: 1 });
    const { results } = await daemon.engine.runOnce();
    for (const result of results) expect(result.error).toMatch(/^KW_WATCH_COUNT_MISMATCH: blocks \d+-\d+: the explorer counted \d+ records \(total_count\) but returned \d+, in 3 fetches/);
    for (const cursor of (await daemon.store.listCursors())) expect(cursor.block).toBe(start - 1);
    expect((await daemon.store.listOutbox())).toEqual([]);
    for (const state of daemon.engine.states()) {
      expect(state.last_outcome).toBe("error");
      expect(state.last_error).toContain("KW_WATCH_COUNT_MISMATCH");
    }
    expect(lines.filter((l) => l.msg === "the explorer's total_count disagrees with the records it returned; fetching the blocks again")).toHaveLength(4);
    expect(lines.filter((l) => l.msg === "tick failed; the cursor stays and the next tick retries")).toHaveLength(2);

    // Once the explorer answers whole again, the next tick goes on from the same cursor.
    sim.setFaults({ shortPageRate: 0 });
    const again = await daemon.engine.runOnce();
    expect(again.results.map((r) => r.error)).toEqual([undefined, undefined]);
    expect((await twinAlerts(daemon))).toHaveLength(6);
  });
});
