import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator } from "../../src/simulator/index.js";
import { startKaiawatch, waitFor, type Child } from "../helpers/child.js";
import { configFromText, quietCommon, readJsonLines } from "../helpers/harness.js";
import { createTestDatabase, startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { nodeFamiliesToOut } from "../helpers/simulator-config.js";

/**
 * Issue 40's "replicas hold this as they hold sources now": two `kaiawatch run` processes on
 * one PostgreSQL store read every node-read family (event logs, NFT and token transfers, and
 * with chain.traces internal transactions) from both the explorer and the node. One is
 * SIGKILLed in the middle of its work and a third takes its place while the chain grows. The
 * alerts of all of them together are those of a healthy explorer-only pass over the same
 * blocks, under the same ids (repeated only under the same id); and every witness of the
 * audit is paired, whichever replica read which source: no record reported missed.
 */
const LEASE_S = 2;

describe("source: both under replicas on one PostgreSQL", () => {
  const cleanups: Array<() => Promise<unknown> | void> = [];
  let server: TestPostgres | undefined;
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await server?.dispose();
  });

  it("deliver the explorer-only pass's alerts under its ids through a SIGKILL, and pair every witness", async () => {
    server = await startPostgres();
    const url = await createTestDatabase(server.url);
    const db = new pg.Pool({ connectionString: url, max: 2 });
    db.on("error", () => undefined);
    cleanups.push(() => db.end());
    const dir = mkdtempSync(join(tmpdir(), "kaiawatch-node-both-replicas-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const sim = await createSimulator({ seed: 37, initialBlocks: 60 });
    cleanups.push(() => sim.close());
    const start = sim.head() - 40;
    const head = (store: string) => `
explorer: { base_url: "${sim.url}", requests_per_second: 100000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, requests_per_second: 100000, traces: true }
${store}
defaults: { schedule: "* * * * * *", start: ${start}, jitter: 0s, source: both }
${nodeFamiliesToOut(sim)}`;

    const replicas: Array<{ id: string; child: Child; out: string; ops: string }> = [];
    const launch = (id: string) => {
      const out = join(dir, `${id}.jsonl`);
      const ops = join(dir, `${id}-ops.jsonl`);
      const path = join(dir, `${id}.yaml`);
      writeFileSync(
        path,
        `${head(`store: { url: "\${KW_STORE_URL}", lease: ${LEASE_S}s, replica_id: ${id} }\nstatus: { listen: false }\noperational: { check_interval: 200ms }`)}
sinks:
  out: { type: file, path: "${out}" }
  ops: { type: file, path: "${ops}", operational: true }
`,
      );
      const child = startKaiawatch(["run", "--config", path, "--log-level", "warn", "--log-format", "json"], { KW_STORE_URL: url });
      cleanups.push(() => {
        if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
      });
      replicas.push({ id, child, out, ops });
    };
    const delivered = () => replicas.flatMap((r) => readJsonLines<AlertDocument>(r.out));

    launch("r1");
    launch("r2");
    const sourcesHeldBy = async (owner: string) => (await db.query<{ key: string }>("SELECT key FROM leases WHERE key LIKE 'src_%' AND owner = $1 ORDER BY key", [owner])).rows.map((row) => row.key);
    // Killed once the two share the sources and have delivered something: in the middle of their work.
    await waitFor(async () => delivered().length > 0 && (await sourcesHeldBy("r1")).length > 0 && (await sourcesHeldBy("r2")).length > 0, 60_000, "the first deliveries, the sources shared by r1 and r2");
    const orphaned = await sourcesHeldBy("r1");
    const victim = replicas[0]!;
    victim.child.process.kill("SIGKILL");
    expect((await victim.child.exited).signal, victim.child.stderr()).toBe("SIGKILL");
    sim.mine(20);
    launch("r3");

    // A healthy explorer-only pass over the same blocks, in this process, with a store of its own.
    const reference = await createDaemon(quietCommon(), { config: configFromText(`${head(`store: { path: "${join(dir, "reference.db")}" }\nstatus: { listen: false }`).replace("source: both", "source: explorer")}\nsinks:\n  out: { type: console }\n`) });
    let expected: string[];
    try {
      await reference.engine.runOnce();
      expected = [...new Set((await reference.store.listOutbox()).map((e) => `${e.rule} ${e.alert.id}`))].sort();
    } finally {
      await reference.stop();
    }
    for (const rule of ["token-transfers", "collection-moves", "multi-moves", "holder-moves", "wallet-token-transfers", "failed-calls", "wallet-internal"]) expect(expected.some((id) => id.startsWith(`${rule} `)), rule).toBe(true);

    const ids = () => new Set(delivered().map((a) => `${a.rule} ${a.id}`));
    await waitFor(() => expected.every((id) => ids().has(id)), 90_000, "every alert of the reference delivered by some replica");
    // The killed replica's sources were taken over once their leases lapsed.
    const heldNow = new Set([...(await sourcesHeldBy("r2")), ...(await sourcesHeldBy("r3"))]);
    expect(orphaned.filter((key) => !heldNow.has(key))).toEqual([]);
    // No id the reference does not have: a record under a second id would be one.
    expect([...ids()].sort()).toEqual(expected);
    // Each witness met its other reader's, in whichever replica: none open, none reported missed.
    await waitFor(async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM witnesses")).rows[0]?.n ?? -1) === 0, 60_000, "every witness paired");
    expect(replicas.flatMap((r) => readJsonLines<AlertDocument>(r.ops)).filter((a) => /missed_record/.test(String(a.labels?.kind)))).toEqual([]);
    console.log(`node both replicas: ${expected.length} alerts; deliveries ${replicas.map((r) => `${r.id} ${readJsonLines(r.out).length}`).join(", ")}`);
  }, 240_000);
});
