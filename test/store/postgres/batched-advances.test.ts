import { beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { createLeaseKeeper } from "../../../src/store/postgres/lease-keeper.js";
import type { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { leaseResource } from "../../../src/store/resources.js";
import { cursor, entry } from "../fixtures/sample.js";
import { fakeClock, usePostgres } from "./pg-fixtures.js";

/**
 * Quiet windows on PostgreSQL: their cursor advances wait in the replica for flush() (one
 * transaction per firing of the engine), each still fenced by its lease epoch there. A second
 * store on the same database reads what another replica, or this one after a crash, would.
 */
const pg = usePostgres();
const LEASE_MS = 9_000;
const KEYS = ["s0", "s1", "s2", "s3"];
let url: string;
let clock: ReturnType<typeof fakeClock>;
beforeEach(async () => {
  url = await pg.database();
  clock = fakeClock();
});

const open = (replicaId: string): Promise<PostgresStore> => pg.open(url, { replicaId, leaseMs: LEASE_MS }, createTestCommon({ now: clock.now }));

describe("batched cursor advances of quiet windows", () => {
  it("are written by flush() in one transaction, each fenced: an advance whose epoch was fenced (an operator's move) is dropped, the others written", async () => {
    const r1 = await open("r1");
    const other = await open("r2");
    const cli = await open("cli");
    await r1.leases.register(KEYS);
    const leases = await r1.leases.claim();
    const writes = (await r1.stats()).writes;
    for (const lease of leases) await r1.commitWindow({ cursor: cursor(lease.key, 10), entries: [], epoch: lease.epoch });
    expect((await r1.stats()).writes).toBe(writes);
    // This replica reads its own advances; the database does not have them yet.
    expect((await r1.getCursor("s1"))?.block).toBe(10);
    expect((await r1.listCursors()).map((c) => [c.key, c.block])).toEqual(KEYS.map((key) => [key, 10]));
    expect(await other.getCursor("s1")).toBeUndefined();

    // `cursors --set` from another process fences s2's holder: its deferred advance must not undo the move.
    await cli.moveCursor(cursor("s2", 5));
    await r1.flush();
    expect((await r1.stats()).writes).toBe(writes + 1);
    expect((await r1.stats()).failedWrites).toBe(0);
    expect((await other.listCursors()).map((c) => [c.key, c.block])).toEqual([["s0", 10], ["s1", 10], ["s2", 5], ["s3", 10]]);
    expect((await r1.getCursor("s2"))?.block).toBe(5);
    // Nothing left to write: no transaction.
    await r1.flush();
    expect((await r1.stats()).writes).toBe(writes + 1);
  });

  it("a lease lost before the flush: the advance is dropped and the new holder goes on from the last written cursor, which is never ahead of its alerts", async () => {
    const r1 = await open("r1");
    const r2 = await open("r2");
    await r1.leases.register(["s0"]);
    const [lease] = await r1.leases.claim();
    await r1.commitWindow({ cursor: cursor("s0", 10), entries: [entry("a1", "slack")], epoch: lease!.epoch });
    await r1.commitWindow({ cursor: cursor("s0", 11), entries: [], epoch: lease!.epoch });
    await r1.commitWindow({ cursor: cursor("s0", 12), entries: [], epoch: lease!.epoch });
    // What a restart of r1 (a crash now) or another replica reads: the window with alerts, and its alerts.
    expect((await r2.getCursor("s0"))?.block).toBe(10);
    expect((await r2.listOutbox()).map((e) => e.id)).toEqual(["a1:slack"]);

    clock.advance(LEASE_MS + 1);
    const [taken] = await r2.leases.claim();
    expect(taken?.epoch).toBe(lease!.epoch + 1);
    await r1.flush();
    expect((await r1.stats()).failedWrites).toBe(0);
    expect((await r2.getCursor("s0"))?.block).toBe(10);
    expect((await r1.getCursor("s0"))?.block).toBe(10);
    await r2.commitWindow({ cursor: cursor("s0", 12), entries: [], epoch: taken!.epoch });
    await r2.flush();
    expect((await r1.getCursor("s0"))?.block).toBe(12);
  });

  it("a window with alerts commits its cursor with them at once, past the deferred advance, and is not moved behind it", async () => {
    const r1 = await open("r1");
    const r2 = await open("r2");
    await r1.commitWindow({ cursor: cursor("s0", 11), entries: [] });
    await r1.commitWindow({ cursor: cursor("s0", 12), entries: [entry("a2", "slack")] });
    expect((await r2.getCursor("s0"))?.block).toBe(12);
    expect((await r2.listOutbox()).map((e) => e.id)).toEqual(["a2:slack"]);
    const writes = (await r1.stats()).writes;
    await r1.flush();
    expect((await r1.stats()).writes).toBe(writes);

    await r1.commitWindow({ cursor: cursor("s0", 14), entries: [] });
    await expect(r1.commitWindow({ cursor: cursor("s0", 13), entries: [entry("a3", "slack")] })).rejects.toMatchObject({ code: "KW_STORE_CURSOR_BACKWARDS" });
    await expect(r1.commitWindow({ cursor: cursor("s0", 13), entries: [] })).rejects.toMatchObject({ code: "KW_STORE_CURSOR_BACKWARDS" });
    // An operator's rewind wins over the advance waiting.
    await r1.setCursor(cursor("s0", 3));
    await r1.flush();
    expect((await r2.getCursor("s0"))?.block).toBe(3);
  });

  it("the lease keeper writes them before it gives a lease back, so that the new holder does not poll those windows again", async () => {
    const stores = { r1: await open("r1"), r2: await open("r2") };
    await stores.r1.leases.register(KEYS);
    const keeperOf = (id: "r1" | "r2") =>
      createLeaseKeeper(createTestCommon({ now: clock.now }), { leases: stores[id].leases, replicaId: id, leaseMs: LEASE_MS, flush: () => stores[id].flush() });
    const r1 = keeperOf("r1");
    const r2 = keeperOf("r2");
    await r1.renewNow();
    for (const key of KEYS) {
      const lease = r1.use(leaseResource({ source: key }))!;
      await stores.r1.commitWindow({ cursor: cursor(key, 20), entries: [], epoch: lease.epoch });
      lease.done();
    }
    // r2 joins; r1 sheds the idle s2 and s3 at its next renewal, and r2 claims them.
    await r2.renewNow();
    await r1.renewNow();
    await r2.renewNow();
    expect(r2.holds(leaseResource({ source: "s2" }))).toBeDefined();
    expect((await stores.r2.getCursor("s2"))?.block).toBe(20);
    expect((await stores.r2.getCursor("s3"))?.block).toBe(20);
  });
});
