import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestCommon } from "../../src/common/common.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { parseConfigText } from "../../src/config/index.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";

let sim: Simulator;
const dir = mkdtempSync(join(tmpdir(), "kaiawatch-shared-sources-"));
beforeAll(async () => {
  sim = await createSimulator({ seed: 21, initialBlocks: 400 });
});
afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The same watches and rules, every watch pinned to its own sources or to shared ones (`only`: these watches alone). */
function configFor(via: "own" | "shared", start: number, storeName: string = via, only?: readonly string[]) {
  const a = sim.addresses;
  const document = {
    explorer: { base_url: sim.url, requests_per_second: 1000, api_plan: via === "own" ? "PRO_PLUS" : "FREE" },
    chain: { rpc_url: sim.rpcUrl, lag_blocks: 0 },
    store: { path: join(dir, `${storeName}.json`) },
    status: { listen: false },
    defaults: { schedule: "*/10 * * * * *", start, jitter: "0s" },
    watches: [
      { name: "wallet", account: a.busyWallet, sources: ["internal_transactions"], via },
      { name: "token", contract: a.busyToken, events: ["Transfer(address,address,uint256)", "Approval(address,address,uint256)"], via },
      { name: "collection", collection: a.busyCollection, via },
      { name: "holder", account: a.busyWallet, nft_contract: a.busyCollection, via },
    ],
    rules: [
      { name: "wallet-calls", watch: "wallet", notify: ["out"] },
      { name: "token-events", watch: "token", notify: ["out"] },
      { name: "collection-moves", watch: "collection", notify: ["out"] },
      { name: "holder-moves", watch: "holder", notify: ["out"] },
    ],
    sinks: { out: { type: "file", path: join(dir, `${via}.jsonl`) } },
  };
  if (only !== undefined) {
    document.watches = document.watches.filter((w) => only.includes(w.name));
    document.rules = document.rules.filter((r) => only.includes(r.watch));
  }
  return parseConfigText(JSON.stringify(document), { fileName: `${via}.yaml`, env: {}, checks: CONFIG_CHECKS }).config;
}

async function alertIds(via: "own" | "shared", start: number) {
  const daemon = await createDaemon(createTestCommon(), { config: configFor(via, start) });
  try {
    const { results } = await daemon.engine.runOnce();
    const failed = results.find((r) => r.error !== undefined);
    if (failed) throw new Error(`${failed.key}: ${failed.error}`);
    const ids = (await daemon.store.listOutbox()).map((entry) => `${entry.rule} ${entry.alert.id}`);
    return { ids: [...new Set(ids)].sort(), sources: daemon.plan.sources.map((s) => s.definition.operation).sort() };
  } finally {
    await daemon.stop();
  }
}

describe("shared sources", () => {
  it("deliver the same alert ids as each watch's own sources", async () => {
    const start = sim.head() - 300;
    const own = await alertIds("own", start);
    const shared = await alertIds("shared", start);
    // Own: op 7, two filtered op 11, op 4, op 3. Shared: op 8, one op 11, op 4 for both NFT watches.
    expect(own.sources).toEqual(["accountEventLogs", "accountEventLogs", "accountInternalTransactions", "accountNftTransfers", "nftTransfers"]);
    expect(shared.sources).toEqual(["accountEventLogs", "blockInternalTransactions", "nftTransfers"]);
    for (const rule of ["wallet-calls", "token-events", "collection-moves", "holder-moves"]) expect(own.ids.some((id) => id.startsWith(`${rule} `))).toBe(true);
    expect(shared.ids).toEqual(own.ids);
  }, 60_000);

  it("hands the cursor over when the plan changes: nothing lost, nothing scanned twice", async () => {
    const start = sim.head() - 200;
    /** Runs one daemon over the blocks up to the head; its alert ids and how many matches the scan made. */
    async function run(via: "own" | "shared", store: string) {
      const daemon = await createDaemon(createTestCommon(), { config: configFor(via, start, store) });
      try {
        const { results } = await daemon.engine.runOnce();
        const failed = results.find((r) => r.error !== undefined);
        if (failed) throw new Error(`${failed.key}: ${failed.error}`);
        return { matches: results.reduce((n, r) => n + (r.result?.alerts ?? 0), 0), ids: (await daemon.store.listOutbox()).map((e) => e.alert.id) };
      } finally {
        await daemon.stop();
      }
    }
    // The same store through three plans: own sources, shared ones, own again (as SIGHUP reloads do).
    let matches = (await run("own", "switching")).matches;
    sim.mine(60);
    matches += (await run("shared", "switching")).matches;
    sim.mine(60);
    const last = await run("own", "switching");
    matches += last.matches;
    const reference = await run("own", "reference");
    expect(reference.ids.length).toBeGreaterThan(0);
    expect([...new Set(last.ids)].sort()).toEqual([...new Set(reference.ids)].sort());
    // Every match became one new alert: no block was scanned twice for a watch (the outbox would hide repeats).
    expect(matches).toBe(reference.matches);
  }, 120_000);

  it("keep each watch's position through plans that change who a shared source serves, and write none while nobody changes it", async () => {
    const start = sim.head() - 200;
    const everything = ["wallet", "token", "collection", "holder"];
    /** One daemon of these watches over a store ("members"): ticks after ticks, the chain growing between; its matches. */
    async function run(only: readonly string[], ticks: number, store = "members") {
      const daemon = await createDaemon(createTestCommon(), { config: configFor("shared", start, store, only) });
      try {
        let matches = 0;
        const generations: Array<number | undefined> = [];
        for (let tick = 0; tick < ticks; tick += 1) {
          if (tick > 0) sim.mine(15);
          const { results } = await daemon.engine.runOnce();
          const failed = results.find((r) => r.error !== undefined);
          if (failed) throw new Error(`${failed.key}: ${failed.error}`);
          matches += results.reduce((n, r) => n + (r.result?.alerts ?? 0), 0);
          // The NFT source's key (collection's own source) is the same in every plan that has it.
          const shared = daemon.plan.sources.find((source) => source.definition.operation === "nftTransfers");
          if (shared !== undefined) generations.push((await daemon.store.getCursor(shared.key))?.followers);
        }
        return { matches, generations, ids: (await daemon.store.listOutbox()).map((e) => e.alert.id) };
      } finally {
        await daemon.stop();
      }
    }
    // The NFT source serves collection (its own) and holder (kept apart, following it). The
    // plans in between drop holder, then serve it from its own source without collection, as
    // config changes would.
    const first = await run(everything, 3);
    // Written once, at the first tick: the ticks after moved the position with the source's cursor only.
    expect(new Set(first.generations).size).toBe(1);
    expect(first.generations[0]).toBeGreaterThan(0);
    let matches = first.matches;
    sim.mine(20);
    const without = await run(["wallet", "token", "collection"], 2);
    // The source lets holder go (where it had got to) at its first tick, and has no follower after.
    expect(without.generations[0]).toBeGreaterThan(first.generations[0]!);
    expect(new Set(without.generations).size).toBe(1);
    matches += without.matches;
    sim.mine(20);
    matches += (await run(["wallet", "token", "holder"], 2)).matches;
    sim.mine(20);
    const last = await run(everything, 2);
    matches += last.matches;
    const reference = await run(everything, 1, "members-reference");
    expect(reference.ids.length).toBeGreaterThan(0);
    expect([...new Set(last.ids)].sort()).toEqual([...new Set(reference.ids)].sort());
    // Every match became one new alert: no watch had a block twice, none lost one.
    expect(matches).toBe(reference.matches);
  }, 180_000);
});
