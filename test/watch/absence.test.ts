import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import type { Simulator } from "../../src/simulator/index.js";
import { eventTopic } from "../../src/chain/signatures.js";
import { configFromText, memoryIO, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { startSimulator } from "../simulator/start.js";
import { createTestDatabase, startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { summarize } from "../../src/cli/commands/validate.js";
import { formatPlan } from "../../src/cli/commands/plan.js";
import { planCredits } from "../../src/watch/credit-plan.js";
import { createJsonRpc } from "../../src/chain/json-rpc.js";
import { readBlockTime } from "../../src/chain/block-time.js";

/**
 * Absence rules end to end against the simulator, in process: a keeper that must emit
 * Upkeep at least once every 10 seconds of block time. The simulator makes blocks on
 * demand (one second apart, or further after a halt); the daemon runs one pass at a time
 * (runOnce), so nothing here waits on a clock.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const KEEPER = "0x00000000000000000000000000000000000ee9e0";
const UPKEEP = eventTopic("Upkeep(uint256)");

interface World {
  sim: Simulator;
  start: (now?: () => number) => Promise<Daemon>;
  alerts: () => AlertDocument[];
  /** A block with one Upkeep of the keeper; returns its number. */
  upkeep: () => number;
  /** `count` blocks without one. */
  quiet: (count: number) => void;
}

async function setup(options: { maxWindowBlocks?: number; storeUrl?: string } = {}): Promise<World> {
  const sim = await startSimulator({ seed: 31, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const text = `
explorer: { base_url: ${sim.url}, requests_per_second: 100000 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0, requests_per_second: 100000 }
store: ${options.storeUrl === undefined ? `{ path: ${join(dir.path, "store.db")} }` : `{ url: "${options.storeUrl}" }`}
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", jitter: 0s, max_window_blocks: ${options.maxWindowBlocks ?? 1000} }
watches:
  - { name: keeper, contract: "${KEEPER}", events: ["Upkeep(uint256)"] }
rules:
  - { name: upkeep-missing, watch: keeper, notify: [out], severity: critical, expect: { at_least: 1, within: 10s } }
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`;
  const config = configFromText(text);
  let round = 0;
  return {
    sim,
    async start(now) {
      const daemon = await createDaemon(quietCommon(now === undefined ? {} : { now }), { config });
      cleanups.push(() => daemon.stop());
      return daemon;
    },
    alerts: () => readJsonLines(join(dir.path, "alerts.jsonl")),
    upkeep: () => sim.addBlock({ eventLogs: [{ contract_address: KEEPER, type: "Upkeep", topics: [UPKEEP], data: `0x${(++round).toString(16).padStart(64, "0")}`, items: [] }] }),
    quiet(count) {
      for (let i = 0; i < count; i++) sim.addBlock();
    },
  };
}

/** Upkeeps every `every` blocks, `times` times. */
function keep(world: World, times: number, every: number): void {
  for (let i = 0; i < times; i++) {
    world.upkeep();
    world.quiet(every - 1);
  }
}

let postgres: TestPostgres | undefined;
afterAll(async () => {
  await postgres?.dispose();
});

describe.each(["SQLite", "PostgreSQL"])("an absence rule (expect) on %s", (backend) => {
  it("fires once when the records stop and resolves once when they are back, through a restart in the middle, and never while catching up", async () => {
    let storeUrl: string | undefined;
    if (backend === "PostgreSQL") {
      postgres ??= await startPostgres();
      storeUrl = await createTestDatabase(postgres.url);
    }
    const world = await setup({ maxWindowBlocks: 7, ...(storeUrl === undefined ? {} : { storeUrl }) });
    let daemon = await world.start();
    await daemon.runOnce(); // starts at the head: observation begins here
    for (let i = 0; i < 3; i++) {
      keep(world, 2, 4);
      await daemon.runOnce();
    }
    expect(world.alerts()).toEqual([]); // an Upkeep every 4 s: never fewer than 1 in 10 s

    const last = world.upkeep();
    world.quiet(12); // 12 s without one
    await daemon.runOnce();
    world.quiet(3);
    await daemon.runOnce();
    expect(world.alerts().map((a) => [a.rule, a.status])).toEqual([["upkeep-missing", "firing"]]);
    const firing = world.alerts()[0] as AlertDocument;
    const fired = last + 12; // the window ended at the pass's head
    expect(firing).toMatchObject({
      source: "event_logs",
      block: fired,
      transaction_hash: null,
      severity: "critical",
      summary: `no matching record in the 10s to block ${fired}, expected at least 1 (last at block ${last})`,
      record: {
        expect: { at_least: 1, within: "10s" },
        seen: 0,
        // The window [T − 10 s, T] in blocks: one block a second.
        window: { from_block: fired - 10, to_block: fired },
        last_seen: { block: last },
      },
    });
    const record = firing.record as { window: { from: string; to: string } };
    expect(Date.parse(record.window.to) - Date.parse(record.window.from)).toBe(10_000);
    expect(firing.datetime).toBe(record.window.to);

    // A restart in the middle of the episode: it goes on from the store.
    await daemon.stop();
    world.quiet(4);
    daemon = await world.start();
    await daemon.runOnce();
    expect(world.alerts()).toHaveLength(1);
    const back = world.upkeep();
    await daemon.runOnce();
    await daemon.runOnce();
    expect(world.alerts().map((a) => [a.id, a.status])).toEqual([
      [firing.id, "firing"],
      [`${firing.id}:resolved`, "resolved"],
    ]);
    expect((world.alerts()[1] as AlertDocument).record).toMatchObject({ seen: 1, last_seen: { block: back } });

    // Down for a minute of block time (and the wall clock an hour later) while the keeper
    // kept to its pace: the catch-up, in windows of 7 blocks, counts each Upkeep at its
    // block's time and finds no absence.
    await daemon.stop();
    keep(world, 15, 4);
    daemon = await world.start(() => Date.now() + 3_600_000);
    const result = await daemon.runOnce();
    expect(result.scan.results[0]?.result?.windows).toBeGreaterThan(5);
    expect(world.alerts()).toHaveLength(2);
  }, 60_000);
});

describe("an absence rule (expect)", () => {
  it("counts in block time: one block after a halt of the chain longer than the window is an absence", async () => {
    const world = await setup();
    const daemon = await world.start();
    await daemon.runOnce();
    keep(world, 4, 5); // 20 s of block time, an Upkeep every 5
    await daemon.runOnce();
    expect(world.alerts()).toEqual([]);
    world.sim.halt(30);
    world.quiet(1);
    await daemon.runOnce();
    expect(world.alerts().map((a) => [a.status, (a.record as { seen: number }).seen])).toEqual([["firing", 0]]);
  });

  it("waits for a whole window of block time after it starts before it can fire", async () => {
    const world = await setup();
    const daemon = await world.start();
    await daemon.runOnce(); // observation starts at the head, with no Upkeep seen yet
    world.quiet(9);
    await daemon.runOnce();
    expect(world.alerts()).toEqual([]); // 9 s observed: not a whole window
    world.quiet(2);
    await daemon.runOnce();
    expect(world.alerts().map((a) => [a.status, (a.record as { observed_since: { block: number } }).observed_since.block])).toEqual([["firing", world.sim.head() - 11]]);
  });
});

describe("absence rules in the config and the commands", () => {
  const base = (rule: string) => `
chain: { rpc_url: "https://rpc.example" }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *" }
watches:
  - { name: keeper, contract: "${KEEPER}", events: ["Upkeep(uint256)"] }
  - { name: payer, balance: ["${KEEPER}"] }
rules:
${rule}
sinks:
  out: { type: console }
`;
  it("names the key path and line of a bad expect", () => {
    const rule = (expect: string, extra = "") => base(`  - { name: upkeep, watch: keeper, notify: [out], expect: ${expect}${extra} }`);
    expect(() => configFromText(rule("{ at_least: 0, within: 10m }"))).toThrow(/:9:\d+ rules\[0\]\.expect\.at_least: must be at least 1/);
    expect(() => configFromText(rule("{ at_least: 1.5, within: 10m }"))).toThrow(/rules\[0\]\.expect\.at_least: expected a whole number of records/);
    expect(() => configFromText(rule("{ at_least: 1, within: 600 }"))).toThrow(/rules\[0\]\.expect\.within: a duration needs a unit, e.g. "600ms" or "600s"/);
    expect(() => configFromText(rule("{ at_least: 1, within: soon }"))).toThrow(/rules\[0\]\.expect\.within: not a duration/);
    expect(() => configFromText(rule("{ at_least: 1, within: 500ms }"))).toThrow(/rules\[0\]\.expect\.within: must be at least 1s/);
    expect(() => configFromText(rule("{ at_least: 1 }"))).toThrow(/rules\[0\]\.expect\.within/);
    expect(() => configFromText(rule("{ at_least: 1, within: 10m, every: 1m }"))).toThrow(/rules\[0\]\.expect.*every/);
    expect(() => configFromText(rule("{ at_least: 1, within: 10m }", ", enrich: [tx_logs]"))).toThrow(/rules\[0\]\.enrich: rule "upkeep" alerts on records that did not arrive/);
    expect(() => configFromText(rule("{ at_least: 1, within: 10m }", ', summary: "{{rule}}"'))).toThrow(/rules\[0\]\.summary: rule "upkeep" alerts on records that did not arrive/);
    expect(() => configFromText(rule("{ at_least: 1, within: 10m }", ", repeat_interval: 1h"))).toThrow(/rules\[0\]\.repeat_interval: rule "upkeep" is an absence rule: its episodes are not reminded of yet/);
    expect(() => configFromText(base(`  - { name: low, watch: payer, notify: [out], when: { balance: { lt: "1 KAIA" } }, expect: { at_least: 1, within: 10m } }`))).toThrow(/rules\[0\]\.expect: rule "low" reads balances/);
  });

  it("is described by validate and plan", () => {
    const config = configFromText(base(`  - { name: upkeep, watch: keeper, notify: [out], expect: { at_least: 2, within: 10m } }`));
    expect(summarize("config.yaml", config)).toMatch(/upkeep\s+keeper\/event_logs\s+→ out {2}\(absence: at least 2 within 10m of block time\)/);
    const plan = planCredits(config, { dayMs: Date.UTC(2026, 0, 5) });
    expect(plan.rpc.absenceSources).toEqual([{ key: plan.sources[0]?.key, rules: ["upkeep"], schedule: "*/10 * * * * *", callsPerDay: 8640 }]);
    expect(formatPlan(plan, config, "config.yaml")).toContain("  absence upkeep (*/10 * * * * *): the block time of each window's end (eth_getBlockByNumber): 8,640 calls, and one per matching block kept");
  });
});

describe("block times from the node", () => {
  it("reads a block's timestamp by eth_getBlockByNumber, and refuses a block the node does not have", async () => {
    const sim = await startSimulator({ initialBlocks: 2, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
    const common = quietCommon();
    const rpc = createJsonRpc(common, { rpcUrl: sim.rpcUrl });
    cleanups.push(() => rpc.close());
    const head = sim.head();
    const before = await readBlockTime(rpc, head);
    sim.halt(3600);
    sim.addBlock();
    expect(await readBlockTime(rpc, head + 1)).toBe(before + 1 + 3600);
    await expect(readBlockTime(rpc, head + 2)).rejects.toMatchObject({ code: "KW_CHAIN_READ", message: expect.stringContaining(`has no block ${head + 2}`) });
  });
});

describe("replay of an absence rule", () => {
  it("refuses --send: there is nothing to send", async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const path = join(dir.path, "config.yaml");
    writeFileSync(path, `
chain: { rpc_url: "https://rpc.example" }
status: { listen: false }
watches:
  - { name: keeper, contract: "${KEEPER}", events: ["Upkeep(uint256)"] }
rules:
  - { name: upkeep, watch: keeper, notify: [out], expect: { at_least: 1, within: 10m } }
sinks:
  out: { type: console }
`);
    const io = memoryIO();
    expect(await main(["replay", "--config", path, "--rule", "upkeep", "--from", "1", "--to", "2", "--send"], io)).toBe(2);
    expect(io.err()).toContain("rule upkeep is an absence rule (expect): replay lists the records it counts, and --send has nothing to send");
  });
});
