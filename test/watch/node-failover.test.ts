import { afterEach, describe, expect, it } from "vitest";
import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { nodeFamiliesToOut } from "../helpers/simulator-config.js";

/**
 * `source: both` (with chain.traces) through five minutes of each way the explorer fails: a 5xx storm, a refused
 * key (401), the daily quota spent, refused connections. The daemon's clock and the chain move
 * together, ten seconds and ten blocks a round; a round is what the head loop does when the
 * head moved: every source ticks once, then the outbox is delivered. Every alert of a node-read
 * family goes out in the round its block appeared (the node's copy), none twice, the same
 * alerts as a healthy explorer-only run; once the explorer is back its cursors catch up and
 * its copies are recognised.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ROUND_MS = 10_000;
const BLOCKS_PER_ROUND = 10;
/** Five minutes of rounds. */
const OUTAGE_ROUNDS = (5 * 60_000) / ROUND_MS;
/** Noon UTC of a fixed day, so that the quota's day (the simulator's and the daemon's) does not end during the test. */
const NOON = Date.UTC(2026, 5, 1, 12);

/** A TCP front to the explorer that can stop listening (connections refused) and listen again on its port. */
async function startSwitchableFront(target: string): Promise<{ url: string; down(): Promise<void>; up(): Promise<void> }> {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(targetPort), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    down: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
    up: () =>
      new Promise<void>((resolve, reject) => {
        server.once("error", reject).listen(port, "127.0.0.1", () => {
          server.off("error", reject);
          resolve();
        });
      }),
  };
}

interface World {
  sim: Simulator;
  front: Awaited<ReturnType<typeof startSwitchableFront>>;
  advance(ms: number): void;
  daemon: Daemon;
  out: string;
  start: number;
}

async function world(): Promise<World> {
  let offset = NOON - Date.now();
  // Real time moves it (timers and deadlines inside need it to), the test moves it further.
  const now = () => Date.now() + offset;
  const sim = await createSimulator({ seed: 41, initialBlocks: 40, now });
  cleanups.push(() => sim.close());
  const front = await startSwitchableFront(sim.url);
  cleanups.push(() => front.down());
  const dir = tempDir("kaiawatch-node-failover-");
  cleanups.push(() => dir.remove());
  const out = join(dir.path, "alerts.jsonl");
  const start = sim.head() - 5;
  const config = configFromText(`
explorer: { base_url: "${front.url}", requests_per_second: 100000, max_retries: 0, timeout: 2s }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, requests_per_second: 100000, traces: true }
store: { path: "${join(dir.path, "store.db")}" }
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", start: ${start}, jitter: 0s, source: both }
${nodeFamiliesToOut(sim)}
sinks:
  out: { type: file, path: "${out}" }
`);
  const daemon = await createDaemon(quietCommon({ now }), { config });
  cleanups.push(() => daemon.stop());
  return { sim, front, advance: (ms) => (offset += ms), daemon, out, start };
}

/** One round: the chain and the clock move on, every source ticks, the outbox is delivered. What failed is looked at by the test. */
async function round(w: World): Promise<{ blocks: { from: number; to: number }; failed: string[] }> {
  const from = w.sim.head() + 1;
  w.sim.mine(BLOCKS_PER_ROUND);
  w.advance(ROUND_MS);
  const { results } = await w.daemon.engine.runOnce();
  await w.daemon.health.check().catch(() => undefined);
  // Delivered whole, however slow the machine: the bound under test is the round, not the clock.
  const drained = await w.daemon.dispatcher.drain({ timeoutMs: 120_000 });
  expect(drained.pending, "the round's alerts all delivered").toBe(0);
  return { blocks: { from, to: w.sim.head() }, failed: results.filter((r) => r.error !== undefined).map((r) => r.key) };
}

/** What a healthy explorer-only daemon alerts over the same blocks (its outbox): rule and id, with the block. */
async function reference(w: World): Promise<Map<string, number>> {
  const dir = tempDir("kaiawatch-node-failover-reference-");
  cleanups.push(() => dir.remove());
  const config = configFromText(`
explorer: { base_url: "${w.sim.url}", requests_per_second: 100000 }
chain: { rpc_url: "${w.sim.rpcUrl}", lag_blocks: 0, requests_per_second: 100000, traces: true }
store: { path: "${join(dir.path, "store.db")}" }
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", start: ${w.start}, jitter: 0s, source: explorer }
${nodeFamiliesToOut(w.sim)}
sinks:
  out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" }
`);
  const daemon = await createDaemon(quietCommon(), { config });
  try {
    // What it queued, not what it delivered: a delivery cut short by a busy machine must not shorten the reference.
    await daemon.engine.runOnce();
    return new Map((await daemon.store.listOutbox()).map((e) => [`${e.rule} ${e.alert.id}`, e.alert.block]));
  } finally {
    await daemon.stop();
  }
}

interface Fault {
  begin(w: World): Promise<void> | void;
  end(w: World): Promise<void> | void;
}

const FAULTS: Array<[string, Fault]> = [
  ["a 5xx storm", { begin: (w) => w.sim.setFaults({ serverErrorRate: 1 }), end: (w) => w.sim.setFaults({ serverErrorRate: 0 }) }],
  ["a refused key (401)", { begin: (w) => w.sim.setFaults({ apiKey: "another-key" }), end: (w) => w.sim.setFaults({ apiKey: undefined }) }],
  [
    "the daily quota spent",
    {
      begin: (w) => w.sim.setFaults({ dailyCreditQuota: w.sim.stats().creditsToday }),
      // Restored when the next day begins; kaiawatch asks again within the hour after the refusal.
      end: (w) => {
        w.sim.setFaults({ dailyCreditQuota: undefined });
        w.advance(61 * 60_000);
      },
    },
  ],
  ["refused connections", { begin: (w) => w.front.down(), end: (w) => w.front.up() }],
];

describe("both sources through five minutes of the explorer failing", () => {
  it.each(FAULTS)("%s: each alert in the round of its block, once; the explorer's cursors catch up", async (_label, fault) => {
    const w = await world();
    const explorerKeys = w.daemon.plan.sources.filter((s) => !s.definition.operation.startsWith("node")).map((s) => s.key);
    const nodeKeys = w.daemon.plan.sources.filter((s) => s.definition.operation.startsWith("node")).map((s) => s.key);
    expect(explorerKeys.length).toBeGreaterThan(0);
    expect(nodeKeys).toHaveLength(3);
    const cursorOf = async (key: string) => (await w.daemon.store.getCursor(key))?.block;
    // Which round delivered each alert, and which blocks each round added.
    const deliveredIn = new Map<string, number>();
    const rounds: Array<{ from: number; to: number }> = [];
    let seen = 0;
    const note = (index: number, blocks: { from: number; to: number }) => {
      rounds[index] = blocks;
      const lines = readJsonLines<AlertDocument>(w.out);
      for (const alert of lines.slice(seen)) {
        const id = `${alert.rule} ${alert.id}`;
        // None twice: the node's copy went out, the explorer's is recognised.
        expect(deliveredIn.has(id), `${id} delivered twice`).toBe(false);
        deliveredIn.set(id, index);
      }
      seen = lines.length;
    };

    let index = 0;
    // The first round also reads the blocks from the start (inclusive) that were there before it.
    note(index++, { ...(await round(w)).blocks, from: w.start });
    await fault.begin(w);
    const failing = new Set<string>();
    for (let i = 0; i < OUTAGE_ROUNDS; i++) {
      const { blocks, failed } = await round(w);
      for (const key of failed) failing.add(key);
      note(index++, blocks);
      // The node carries the families: its cursors at the head at every round of the outage.
      for (const key of nodeKeys) expect(await cursorOf(key)).toBe(w.sim.head());
    }
    // The explorer carried nothing meanwhile: its sources failed (or, the quota spent, were held back).
    for (const key of explorerKeys) expect(await cursorOf(key)).toBeLessThanOrEqual(rounds[0]!.to);
    expect(failing.size > 0 || w.daemon.budget.state().quota !== null).toBe(true);

    await fault.end(w);
    const recovered = await round(w);
    note(index++, recovered.blocks);
    expect(recovered.failed).toEqual([]);
    for (const key of [...explorerKeys, ...nodeKeys]) expect(await cursorOf(key), key).toBe(w.sim.head());

    const expected = await reference(w);
    expect(expected.size).toBeGreaterThan(OUTAGE_ROUNDS);
    expect([...deliveredIn.keys()].sort()).toEqual([...expected.keys()].sort());
    // Within the head interval of its block: in the round whose blocks hold it.
    const late = [...expected].filter(([id, block]) => {
      const r = rounds[deliveredIn.get(id) as number] as { from: number; to: number };
      return block < r.from || block > r.to;
    });
    expect(late).toEqual([]);
  }, 120_000);
});
