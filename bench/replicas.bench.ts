/**
 * Replicas: 10,000 sources shared by 1, 2 and 4 replicas on one PostgreSQL, against the
 * simulator, over a quiet chain (one new block, no records in it). Per replica count:
 * requests of one quiet tick of every replica (target: one per source plus one head read per
 * replica), PostgreSQL transactions during it (pg_stat_database xact_commit delta, lease
 * renewals included), and the share of the sources each replica holds (target: within 10%
 * of even). The replicas are daemons built in this process (engine.runOnce()), each with its
 * own pool of connections; the simulator runs in a process of its own. Then the failover
 * with the default lease, measured with real processes and SIGKILL (target ≤ 15 s). Prints
 * the machine and the PostgreSQL version.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { createTestCommon } from "../src/common/common.js";
import { createDaemon, type Daemon } from "../src/daemon/create-daemon.js";
import { leaseResource } from "../src/store/resources.js";
import type { SimulatorStats } from "../src/simulator/index.js";
import { createTestDatabase, startPostgres } from "../test/helpers/postgres.js";
import { report, type BenchFigure } from "./lib.js";
import { startSimulatorProcess } from "./simulator-process.js";
import { quick, sized, smoke } from "./mode.js";
import { buildDist, configOf, loadNote, median, round, seededRandom, tempDir } from "./support.js";

const SOURCES = sized(10_000, 1_000, 8);
const REPLICA_COUNTS = sized([1, 2, 4], [1, 2, 4], [1, 2]);

const random = seededRandom(0x4e91);
const address = () => `0x${Array.from({ length: 40 }, () => "0123456789abcdef"[Math.floor(random() * 16)]).join("")}`;

const sim = await startSimulatorProcess({ seed: 5, initialBlocks: 10, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
const server = await startPostgres();
const dir = tempDir("kaiawatch-bench-replicas-");

// A quarter each: contracts, collections, and accounts with two sources: one rule each.
const watches: unknown[] = [];
const rules: unknown[] = [];
for (let i = 0; i < SOURCES / 4; i++) {
  watches.push({ name: `c${i}`, contract: address() });
  rules.push({ name: `c${i}`, watch: `c${i}`, when: { event: "Transfer" }, notify: ["out"] });
  watches.push({ name: `n${i}`, collection: address() });
  rules.push({ name: `n${i}`, watch: `n${i}`, when: { mint: true }, notify: ["out"] });
  watches.push({ name: `a${i}`, account: address(), sources: ["nft_transfers", "internal_transactions"] });
  rules.push({ name: `a${i}-nft`, watch: `a${i}`, source: "nft_transfers", when: { direction: "in" }, notify: ["out"] });
  rules.push({ name: `a${i}-calls`, watch: `a${i}`, source: "internal_transactions", when: { amount: { gte: "1000 KAIA" } }, notify: ["out"] });
}
const configFor = (url: string, id: string) =>
  configOf({
    explorer: { base_url: sim.url, requests_per_second: 100_000, page_size: 2000 },
    chain: { rpc_url: sim.rpcUrl, lag_blocks: 0 },
    store: { url, replica_id: id },
    status: { listen: false },
    // Ticks are driven by hand (engine.runOnce()): the schedule never fires during the run.
    defaults: { start: "latest", jitter: "0s", schedule: "0 0 0 1 1 *" },
    watches,
    rules,
    sinks: { out: { type: "file", path: `${dir.path}/alerts.jsonl` } },
  });

const requestsOf = (stats: SimulatorStats) => {
  let api = 0;
  let rpc = 0;
  for (const [op, byStatus] of Object.entries(stats.requests)) {
    const n = Object.values(byStatus).reduce((a, b) => a + b, 0);
    if (op === "rpc") rpc += n;
    else api += n;
  }
  return { api, rpc };
};

const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
const version = (await admin.query<{ version: string }>("SELECT version()")).rows[0]?.version ?? "unknown";
console.log(`PostgreSQL: ${version}`);
/** Transactions committed in the database so far. Statistics reach the view within about a second of a transaction (PostgreSQL 15+): wait that long before reading. */
const commits = async (database: string): Promise<number> => {
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await admin.query("SELECT pg_stat_clear_snapshot()");
  return Number((await admin.query<{ n: string }>("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1", [database])).rows[0]?.n);
};

const held = (daemon: Daemon) => daemon.plan.sources.filter((source) => daemon.ownership.holds(leaseResource({ source: source.key })) !== undefined).length;

const figures: BenchFigure[] = [];
const notes: string[] = [`PostgreSQL: ${version}.`, loadNote("at the start")];
for (const count of REPLICA_COUNTS) {
  const url = await createTestDatabase(server.url);
  const database = new URL(url).pathname.slice(1);
  const replicas: Daemon[] = [];
  for (let i = 0; i < count; i++) replicas.push(await createDaemon(createTestCommon(), { config: configFor(url, `bench-r${i + 1}`) }));
  try {
    // The first pass starts each replica's lease keeper; the first to start claims everything,
    // then renewals shed down to the fair share and the others claim the rest.
    for (const replica of replicas) await replica.runOnce({ drainTimeoutMs: 0 });
    for (let round = 0; round < 6; round++) for (const replica of replicas) await replica.ownership.renewNow();
    const shares = replicas.map(held);
    // The plan's sources, not the config's: the planner may serve several watches with one source.
    const planned = replicas[0]!.plan.sources.length;
    // Every replica sets the cursors of what it now holds (start: latest): no window read yet.
    await Promise.all(replicas.map((replica) => replica.engine.runOnce()));

    // The measured tick: one new, empty block; every replica ticks once, at the same time.
    await sim.mine(1);
    await sim.resetStats();
    const before = await commits(database);
    const started = performance.now();
    const ticks = await Promise.all(replicas.map((replica) => replica.engine.runOnce()));
    const seconds = (performance.now() - started) / 1000;
    const transactions = (await commits(database)) - before - 1; // the read of `before` itself
    const requests = requestsOf(await sim.stats());
    const failed = ticks.flatMap((tick) => tick.results.filter((r) => r.error !== undefined));
    if (failed.length > 0) throw new Error(`${failed.length} sources failed, e.g. ${failed[0]?.key}: ${failed[0]?.error}`);
    const ticked = ticks.reduce((sum, tick) => sum + tick.results.filter((r) => r.result !== undefined).length, 0);

    const even = planned / count;
    const worst = Math.max(...shares.map((share) => Math.abs(share - even) / even));
    const target = planned + count;
    figures.push(
      { name: `${count} replica(s): requests in one quiet tick`, value: requests.api + requests.rpc, unit: "requests", target: `≤ ${target} (one per source + one head read per replica)`, ok: requests.api + requests.rpc <= target },
      { name: `${count} replica(s): sources ticked (each by its holder only)`, value: ticked, unit: "sources", target: `= ${planned}`, ok: ticked === planned },
      { name: `${count} replica(s): PostgreSQL transactions during the tick`, value: transactions, unit: "transactions" },
      { name: `${count} replica(s): tick time`, value: round(seconds, 2), unit: "s" },
      { name: `${count} replica(s): largest deviation of a replica's share from even`, value: round(worst * 100, 1), unit: "%", target: "≤ 10%", ok: worst <= 0.1 },
    );
    notes.push(`${count} replica(s): ${planned} sources in the plan (of ${SOURCES} configured); sources held ${shares.join(" / ")}; requests ${requests.api} explorer + ${requests.rpc} head reads.`);
    console.log(`${count} replica(s): shares ${shares.join("/")}, ${requests.api} + ${requests.rpc} requests, ${transactions} transactions, ${seconds.toFixed(2)} s`);
  } finally {
    for (const replica of replicas) await replica.stop();
  }
}
notes.push("Transactions include the replicas' lease renewals and heartbeats that fell within the tick (one per replica every third of a lease).");

// Failover with the default lease (store.lease 10 s), measured rather than computed: two
// `kaiawatch run` processes share four sources that tick every second while the chain grows
// a block a second; the holder of one source is SIGKILLed, and the time runs until the other
// replica has committed that source's next window. The killed one is started again (a new
// id) before the next round, and the next round waits until both hold sources.
const FAILOVERS = quick ? 1 : 3;
// The smoke run (npm test) takes over after a 2 s lease instead of waiting out the default 10 s.
const FAILOVER_LEASE = smoke ? { lease: "2s" } : {};
const FAILOVER_TARGET_S = 15;
const bin = buildDist();
const failoverUrl = await createTestDatabase(server.url);
const failoverDb = new pg.Client({ connectionString: failoverUrl });
await failoverDb.connect();
const failoverConfig = join(dir.path, "failover.json");
writeFileSync(
  failoverConfig,
  JSON.stringify({
    explorer: { base_url: sim.url, requests_per_second: 1000 },
    chain: { rpc_url: sim.rpcUrl, lag_blocks: 0 },
    // The URL from the environment, as in production (a secret stays out of the file); no lease: the default.
    store: { url: "${KW_STORE_URL}", replica_id: "${KW_REPLICA}", ...FAILOVER_LEASE },
    status: { listen: false },
    defaults: { start: "latest", jitter: "0s", schedule: "* * * * * *" },
    watches: watches.slice(0, 3),
    rules: rules.slice(0, 4),
    sinks: { out: { type: "file", path: join(dir.path, "failover-alerts.jsonl") } },
  }),
);
const children = new Map<string, ChildProcess>();
let launched = 0;
const launch = () => {
  const id = `failover-r${++launched}`;
  children.set(id, spawn(process.execPath, [bin, "run", "--config", failoverConfig, "--log-level", "warn"], { env: { ...process.env, KW_STORE_URL: failoverUrl, KW_REPLICA: id }, stdio: ["ignore", "ignore", "inherit"] }));
};
const waitUntil = async (condition: () => Promise<boolean>, timeoutMs: number, what: string) => {
  const deadline = performance.now() + timeoutMs;
  // Not yet (false) while the replicas are still creating the schema.
  while (!(await condition().catch(() => false))) {
    if (performance.now() > deadline) throw new Error(`failover: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};
const cursorOf = async (key: string) => Number((await failoverDb.query<{ block: string }>("SELECT block FROM cursors WHERE key = $1", [key])).rows[0]?.block ?? Number.NaN);
const sourceHolders = async () => (await failoverDb.query<{ key: string; owner: string }>("SELECT key, owner FROM leases WHERE owner IS NOT NULL AND expires_ms > $1 AND key LIKE 'src_%' ORDER BY key", [Date.now()])).rows;
launch();
launch();
const miner = setInterval(() => void sim.mine(1).catch(() => undefined), 1000);
const failovers: number[] = [];
try {
  for (let i = 0; i < FAILOVERS; i++) {
    await waitUntil(async () => new Set((await sourceHolders()).map((row) => row.owner)).size === 2, 60_000, "both replicas holding sources");
    const { key, owner } = (await sourceHolders())[0]!;
    // Its cursor written (a source starting at the head writes it with its first quiet window).
    await waitUntil(async () => !Number.isNaN(await cursorOf(key)), 60_000, `the first cursor of ${key}`);
    const holder = children.get(owner)!;
    const exited = new Promise((resolve) => holder.once("exit", resolve));
    const killedAt = performance.now();
    holder.kill("SIGKILL");
    await exited;
    children.delete(owner);
    // Read once the holder is dead: nothing it wrote can count as the next window.
    const block = await cursorOf(key);
    await waitUntil(async () => (await cursorOf(key)) > block, 60_000, `the next window of ${key}`);
    failovers.push((performance.now() - killedAt) / 1000);
    console.log(`failover ${i + 1}: ${key}'s next window committed ${failovers.at(-1)!.toFixed(1)} s after its holder ${owner} was SIGKILLed`);
    launch();
  }
} finally {
  clearInterval(miner);
  for (const child of children.values()) child.kill("SIGKILL");
  await failoverDb.end();
}
const worstFailover = Math.max(...failovers);
figures.push(
  { name: "failover with the default lease (10 s): median", value: round(median(failovers), 1), unit: "s" },
  { name: "failover with the default lease (10 s): worst", value: round(worstFailover, 1), unit: "s", target: `≤ ${FAILOVER_TARGET_S} s`, ok: worstFailover <= FAILOVER_TARGET_S },
);
notes.push(
  `Failover: ${failovers.length} SIGKILLs of a source's holder (two \`kaiawatch run\` processes, 4 sources ticking every second, a block a second): ${failovers.map((s) => s.toFixed(1)).join(", ")} s from the kill to the other replica's commit of the source's next window. Expected: at most the lease (10 s), plus up to a third of it until the survivor's renewal notices the expiry, plus one tick.`,
  loadNote("at the end"),
);

await admin.end();
await sim.close();
await server.dispose();
dir.remove();
report("replicas", figures, notes, { write: !quick });
