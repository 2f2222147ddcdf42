import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createTestCommon } from "../../src/common/common.js";
import { loadConfig } from "../../src/config/index.js";
import { createSilenceBook } from "../../src/notify/silences.js";
import { createPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { definitionsOfWatch } from "../../src/watch/plan.js";
import { sourceKey } from "../../src/watch/source.js";
import { commit, entry } from "../notify/dispatcher-fixtures.js";
import { createTestDatabase, startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { memoryIO, quietCommon, tempDir } from "../helpers/harness.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";

/**
 * `kaiawatch silence`, `outbox` and `cursors` with `store.url`: they work on the PostgreSQL
 * store the replicas share (no lock, no side file, no store file) and never print its URL.
 */
let server: TestPostgres;
// A cursor move reads the head (here the simulator's) to show what it costs.
let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator({ seed: 7, initialBlocks: 200 });
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.dispose();
  await sim?.close();
});

const PASSWORD = "s3cret-pg-password";
let url: string;
let dir: ReturnType<typeof tempDir>;
let config: string;
let store: PostgresStore;
beforeEach(async (context) => {
  // The server trusts 127.0.0.1, so any password works: it is here to be kept out of every output.
  url = (await createTestDatabase(server.url)).replace("postgres@", `postgres:${PASSWORD}@`);
  dir = tempDir();
  config = join(dir.path, "config.yaml");
  writeFileSync(
    config,
    `
explorer: { api_key: key-for-tests-123 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { url: "\${KW_STORE_URL}" }
status: { listen: false }
watches:
  - { name: wallet, account: "0x1111111111111111111111111111111111111111", sources: [internal_transactions] }
rules:
  - { name: outflow, watch: wallet, notify: [out] }
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`,
  );
  store = await createPostgresStore(createTestCommon(), { url, replicaId: "r1" });
  context.onTestFinished(async () => {
    await store.close();
    dir.remove();
  });
});

async function kaiawatch(...argv: string[]) {
  const io = memoryIO({ KW_STORE_URL: url });
  const code = await main(argv, io);
  const result = { code, stdout: io.out(), stderr: io.err() };
  // Never the URL nor its password, whatever happened.
  expect(`${result.stdout}${result.stderr}`).not.toContain(PASSWORD);
  expect(`${result.stdout}${result.stderr}`).not.toContain(url);
  return result;
}

describe("CLI commands with store.url", () => {
  it("silence add, list and remove work on the shared silences, which a replica's silence book reads at its next round", async () => {
    const common = createTestCommon();
    const book = await createSilenceBook(common, { silences: store.silences });
    const added = await kaiawatch("silence", "add", "--config", config, "--rule", "outflow", "--match", "to=0xAB", "--for", "2h", "--reason", "planned sweep");
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    expect(added.stdout).toContain("every replica reads the silences from the store");
    const id = /Silence (sil_[0-9a-f]{8}) added/.exec(added.stdout)?.[1];
    expect((await book.current(common.now())).map((s) => [s.id, s.rule, s.match])).toEqual([[id, "outflow", { to: "0xab" }]]);
    // No side file beside a store path: the database is the one place.
    expect(existsSync(join(dir.path, "data"))).toBe(false);

    // A daemon on this config reads the same table (no side file) at its delivery rounds.
    const daemon = await createDaemon(quietCommon(), { config: (await loadConfig({ path: config, env: { KW_STORE_URL: url } })).config });
    try {
      expect((await daemon.silences.current(Date.now())).map((s) => s.id)).toEqual([id]);
    } finally {
      await daemon.stop();
    }

    await store.silences.count(new Map([[id!, 2]]));
    const listed = await kaiawatch("silence", "list", "--config", config, "--json");
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ id, rule: "outflow", match: { to: "0xab" }, reason: "planned sweep", suppressed: 2 });

    const removed = await kaiawatch("silence", "remove", "--config", config, id!);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`Silence ${id} removed`);
    expect(await book.current(common.now())).toEqual([]);
    const again = await kaiawatch("silence", "remove", "--config", config, id!);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain("no active silence");
    expect((await kaiawatch("silence", "list", "--config", config)).stdout).toContain("No active silences.");
  });

  it("outbox lists the shared outbox and retry requeues its dead letters in the database", async () => {
    await commit(store, [entry("ok1", "out", "outflow"), entry("bad1", "out", "outflow"), entry("wait1", "out", "outflow")]);
    const at = new Date().toISOString();
    await store.updateOutbox([
      { id: "ok1:out", kind: "delivered", at },
      { id: "bad1:out", kind: "dead", at, reason: "HTTP 400 from the receiver" },
    ]);
    const listed = await kaiawatch("outbox", "--config", config);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/wait1:out\s+out\s+outflow\s+pending/);
    expect(listed.stdout).toMatch(/bad1:out\s+out\s+outflow\s+dead.*HTTP 400/);
    expect(listed.stdout).toContain("1 pending, 1 dead");
    const json = await kaiawatch("outbox", "--config", config, "--state", "delivered", "--json");
    expect(JSON.parse(json.stdout)).toMatchObject({ id: "ok1:out", state: "delivered" });

    const retried = await kaiawatch("outbox", "retry", "--all", "--config", config);
    expect(retried.stderr).toBe("");
    expect(retried.code).toBe(0);
    expect(retried.stdout).toContain("Requeued 1 dead letter; the replica holding each sink sends them");
    expect((await store.listOutbox({ state: "pending" })).map((e) => [e.id, e.attempts])).toEqual([
      ["bad1:out", 0],
      ["wait1:out", 0],
    ]);
    const none = await kaiawatch("outbox", "retry", "bad1:out", "--config", config);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('no dead letter matches "bad1:out"');
  });

  it("cursors lists the shared cursors, and --set moves one while fencing the replica that polls it", async () => {
    const loaded = await loadConfig({ path: config, env: { KW_STORE_URL: url } });
    const [definition] = definitionsOfWatch(loaded.config.chain.network, loaded.config.watches[0]!);
    const key = sourceKey(definition!);
    const cursor = (block: number) => ({ key, watch: "wallet", source: "internal_transactions", description: "d", block, updated_at: new Date().toISOString() });
    // Replica r1 holds the source and has committed up to block 100.
    await store.leases.register([key]);
    const [lease] = await store.leases.claim();
    await store.commitWindow({ cursor: cursor(100), entries: [], epoch: lease!.epoch });
    // A quiet window's advance is written by the flush after the engine's firing.
    await store.flush();

    const listed = await kaiawatch("cursors", "--config", config);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${key}\\s+wallet\\s+100`));

    // --yes: block 40 is far behind the simulator's head, a catch-up above the threshold (the guard has its own tests in cursors.test.ts).
    const moved = await kaiawatch("cursors", "--config", config, "--set", "wallet=40", "--yes");
    expect(moved.stderr).toBe("");
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain(`${key} (wallet): 100 → 40`);
    expect((await store.getCursor(key))?.block).toBe(40);
    // r1's window from the old position, committed after the move, cannot undo the rewind.
    await expect(store.commitWindow({ cursor: cursor(120), entries: [entry("late", "out", "outflow")], epoch: lease!.epoch })).rejects.toMatchObject({ code: "KW_STORE_LEASE_LOST" });
    expect((await store.getCursor(key))?.block).toBe(40);
    // r1 keeps the source: its next renewal learns the new epoch, and its next window commits from 40.
    const renewed = await store.leases.renew();
    expect(renewed.held.map((l) => [l.key, l.epoch])).toEqual([[key, lease!.epoch + 1]]);
    await store.commitWindow({ cursor: cursor(60), entries: [], epoch: lease!.epoch + 1 });
    expect((await store.getCursor(key))?.block).toBe(60);
  });
});
