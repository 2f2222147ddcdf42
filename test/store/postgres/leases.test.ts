import { beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import type { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { cursor, entry } from "../fixtures/sample.js";
import { fakeClock, usePostgres } from "./pg-fixtures.js";

const pg = usePostgres();
const LEASE_MS = 10_000;
let url: string;
let clock: ReturnType<typeof fakeClock>;
beforeEach(async () => {
  url = await pg.database();
  clock = fakeClock();
});

/** Replicas on one database and one (fake) clock. */
async function replicas(n: number): Promise<PostgresStore[]> {
  const stores: PostgresStore[] = [];
  for (let i = 1; i <= n; i++) stores.push(await pg.open(url, { replicaId: `r${i}`, leaseMs: LEASE_MS }, createTestCommon({ now: clock.now })));
  return stores;
}

const keys = (n: number) => Array.from({ length: n }, (_, i) => `s${String(i).padStart(3, "0")}`);

async function owners(store: PostgresStore): Promise<Map<string, number>> {
  const count = new Map<string, number>();
  for (const lease of await store.leases.list()) if (lease.owner !== undefined) count.set(lease.owner, (count.get(lease.owner) ?? 0) + 1);
  return count;
}

describe("leases of sources", () => {
  it("are claimed once, renewed, and taken over with a new epoch after they expire", async () => {
    const [r1, r2] = (await replicas(2)) as [PostgresStore, PostgresStore];
    await r1.leases.register(keys(4));
    const claimed = await r1.leases.claim();
    expect(claimed.map((l) => [l.key, l.epoch, l.expiresMs])).toEqual(keys(4).map((key) => [key, 1, clock.now() + LEASE_MS]));
    clock.advance(LEASE_MS - 1);
    const renewed = await r1.leases.renew();
    expect(renewed.lost).toEqual([]);
    expect(renewed.held.map((l) => [l.epoch, l.expiresMs])).toEqual(keys(4).map(() => [1, clock.now() + LEASE_MS]));
    clock.advance(LEASE_MS - 1);
    // r2 starts: nothing is free, the renewed leases hold.
    expect(await r2.leases.claim()).toEqual([]);

    // r1 stops renewing (a SIGKILL, a pause): once its leases expire, r2 takes them over.
    clock.advance(2);
    const taken = await r2.leases.claim();
    expect(taken.map((l) => [l.key, l.epoch])).toEqual(keys(4).map((key) => [key, 2]));
    expect(await owners(r2)).toEqual(new Map([["r2", 4]]));
    // r1 wakes up: its renewal finds that it holds nothing any more.
    expect(await r1.leases.renew()).toEqual({ held: [], lost: keys(4), surplus: [] });
  });

  it("fence commits: a replica that lost the lease cannot move the cursor, the new holder can", async () => {
    const [r1, r2] = (await replicas(2)) as [PostgresStore, PostgresStore];
    await r1.leases.register(["s1"]);
    const [old] = await r1.leases.claim();
    await r1.commitWindow({ cursor: cursor("s1", 10), entries: [entry("a1", "slack")], epoch: old!.epoch });

    clock.advance(LEASE_MS + 1);
    // Expired but not taken: still r1's at the same epoch, so its late commit is fine.
    await r1.commitWindow({ cursor: cursor("s1", 11), entries: [], epoch: old!.epoch });
    await r1.flush();
    const [next] = await r2.leases.claim();
    expect(next!.epoch).toBe(old!.epoch + 1);

    await expect(r1.commitWindow({ cursor: cursor("s1", 20), entries: [entry("a2", "slack")], epoch: old!.epoch })).rejects.toMatchObject({ code: "KW_STORE_LEASE_LOST" });
    // An absence rule's state goes with its window: refused with it, even without entries.
    const absence = { rule: "upkeep", since: { block: 1, time: 1 }, through: 20, recent: [], at_least: 1, episode: null };
    await expect(r1.commitWindow({ cursor: cursor("s1", 20), entries: [], epoch: old!.epoch, absences: [absence] })).rejects.toMatchObject({ code: "KW_STORE_LEASE_LOST" });
    expect(await r1.listAbsences()).toEqual([]);
    expect((await r1.getCursor("s1"))?.block).toBe(11);
    expect((await r1.listOutbox()).map((e) => e.id)).toEqual(["a1:slack"]);
    expect((await r1.stats()).failedWrites).toBe(0);
    // A replica cannot fence with someone else's epoch either.
    await expect(r1.commitWindow({ cursor: cursor("s1", 20), entries: [entry("a3", "slack")], epoch: next!.epoch })).rejects.toMatchObject({ code: "KW_STORE_LEASE_LOST" });
    // Quiet windows wait for flush(), which drops the advances it finds unfenced the same way.
    await r1.commitWindow({ cursor: cursor("s1", 20), entries: [], epoch: next!.epoch });
    await r1.commitWindow({ cursor: cursor("nope", 1), entries: [], epoch: 1 });
    await r1.flush();
    expect((await r1.getCursor("s1"))?.block).toBe(11);
    expect(await r1.getCursor("nope")).toBeUndefined();
    expect((await r1.stats()).failedWrites).toBe(0);

    await r2.commitWindow({ cursor: cursor("s1", 20), entries: [entry("a2", "slack")], epoch: next!.epoch });
    expect((await r2.getCursor("s1"))?.block).toBe(20);
  });

  it("spread sources evenly: a replica that joins gets its share as the others shed theirs", async () => {
    const [r1, r2, r3] = (await replicas(3)) as [PostgresStore, PostgresStore, PostgresStore];
    await r1.leases.register(keys(30));
    expect(await r1.leases.claim()).toHaveLength(30);

    expect(await r2.leases.claim()).toEqual([]);
    // r1 still holds its surplus (above the even share) until it releases it, once its work has stopped.
    const renewed = await r1.leases.renew();
    expect([renewed.held.length, renewed.lost.length, renewed.surplus.length]).toEqual([30, 0, 15]);
    expect(await r2.leases.claim()).toEqual([]);
    await r1.leases.release(renewed.surplus);
    expect(await r2.leases.claim()).toHaveLength(15);

    expect(await r3.leases.claim()).toEqual([]);
    for (const r of [r1, r2]) await r.leases.release((await r.leases.renew()).surplus);
    expect(await r3.leases.claim()).toHaveLength(10);
    expect(await owners(r1)).toEqual(new Map([["r1", 10], ["r2", 10], ["r3", 10]]));
    expect((await r1.leases.replicas()).map((r) => [r.id, r.live])).toEqual([["r1", true], ["r2", true], ["r3", true]]);
  });

  it("let the survivors take over the sources of a replica that died, within their share", async () => {
    const [r1, r2, r3] = (await replicas(3)) as [PostgresStore, PostgresStore, PostgresStore];
    await r1.leases.register(keys(30));
    await r1.leases.heartbeat();
    await r2.leases.heartbeat();
    await r3.leases.heartbeat();
    for (const r of [r1, r2, r3]) expect(await r.leases.claim()).toHaveLength(10 + (r === r3 ? -2 : 1));

    clock.advance(LEASE_MS / 2);
    await r1.leases.renew();
    await r2.leases.renew();
    clock.advance(LEASE_MS / 2 + 1); // r3 (8 sources) has not renewed: expired, and no longer live
    expect((await r1.leases.replicas()).map((r) => r.live)).toEqual([true, true, false]);
    const a = await r1.leases.claim();
    const b = await r2.leases.claim();
    expect(a.length + b.length).toBe(8);
    // Each within its share (15) plus the slack of one.
    const held = await owners(r1);
    expect([...held.keys()].sort()).toEqual(["r1", "r2"]);
    for (const n of held.values()) expect(n).toBeLessThanOrEqual(16);
  });

  it("are released at shutdown so that the others take over at once", async () => {
    const [r1, r2] = (await replicas(2)) as [PostgresStore, PostgresStore];
    await r1.leases.register(keys(6));
    await r1.leases.claim();
    await r1.leases.leave();
    expect(r1.leases.held()).toEqual([]);
    // r1 no longer counts as live: r2's share is every source.
    expect(await r2.leases.claim()).toHaveLength(6);
  });

  it("never give one source to two replicas that claim at the same moment", async () => {
    const stores = await replicas(3);
    await stores[0]!.leases.register(keys(100));
    for (const store of stores) await store.leases.heartbeat();
    const results = await Promise.all(stores.map((store) => store.leases.claim()));
    const all = results.flat().map((lease) => lease.key);
    expect(new Set(all).size).toBe(all.length);
    for (const [i, result] of results.entries()) {
      expect(result.length).toBeLessThanOrEqual(35);
      const held = (await stores[0]!.leases.list()).filter((lease) => lease.owner === `r${i + 1}`).map((lease) => lease.key);
      expect(held).toEqual(result.map((lease) => lease.key));
    }
  });
});
