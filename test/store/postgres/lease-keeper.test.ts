import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import type { Leases } from "../../../src/store/postgres/leases.js";
import { createLeaseKeeper } from "../../../src/store/postgres/lease-keeper.js";
import { type Ownership } from "../../../src/store/ownership.js";
import { leaseResource } from "../../../src/store/resources.js";
import type { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { cursor } from "../fixtures/sample.js";
import { fakeClock, usePostgres } from "./pg-fixtures.js";
import { waitFor } from "../../helpers/wait-for.js";

/**
 * The lease keeper's signals (HeldLease.signal): the work under a lease stops the moment the
 * replica must stop using it — shed (before the release is written), taken over, or at the end
 * of its usable time — and goes on across a renewal of the same lease. Each replica has its
 * own fake clock; the one test of the timer fakes the timers too.
 */
const pg = usePostgres();
const LEASE_MS = 9_000;
const USABLE_MS = LEASE_MS - LEASE_MS / 3;
const KEYS = ["s0", "s1", "s2", "s3"];
let url: string;
beforeEach(async () => {
  url = await pg.database();
});
afterEach(() => {
  vi.useRealTimers();
});

async function keeperOf(id: string, now: () => number, wrap: (leases: Leases) => Leases = (leases) => leases): Promise<{ keeper: Ownership; leases: Leases; store: PostgresStore }> {
  const store = await pg.open(url, { replicaId: id, leaseMs: LEASE_MS }, createTestCommon({ now }));
  await store.leases.register(KEYS);
  const keeper = createLeaseKeeper(createTestCommon({ now }), { leases: wrap(store.leases), replicaId: id, leaseMs: LEASE_MS, flush: () => store.flush() });
  return { keeper, leases: store.leases, store };
}

const signalOf = (keeper: Ownership, key: string) => keeper.holds(leaseResource({ source: key }))?.signal;

describe("the lease keeper's signals", () => {
  it("end the work on a shed lease: at once if idle (before the release is written), after its window if in use (released at the next renewal); and on a lease taken over", async () => {
    const clocks = { r1: fakeClock(), r2: fakeClock() };
    // What r1's keeper had done with each lease when its release was about to be written.
    const atRelease: Array<{ key: string; aborted: boolean | undefined; held: boolean }> = [];
    const r1Keeper: { current?: Ownership } = {};
    const signals = new Map<string, AbortSignal | undefined>();
    const { keeper: r1, leases } = await keeperOf("r1", clocks.r1.now, (leases) => ({
      ...leases,
      release: async (keys) => {
        for (const key of keys ?? []) atRelease.push({ key, aborted: signals.get(key)?.aborted, held: r1Keeper.current!.holds(leaseResource({ source: key })) !== undefined });
        await leases.release(keys);
      },
    }));
    r1Keeper.current = r1;
    const { keeper: r2 } = await keeperOf("r2", clocks.r2.now);
    const ownerOf = async (key: string) => (await leases.list()).find((lease) => lease.key === key)?.owner;
    await r1.renewNow();
    for (const key of KEYS) signals.set(key, signalOf(r1, key));
    expect([...signals.values()].every((signal) => signal !== undefined && !signal.aborted)).toBe(true);
    // A tick of s3 is running.
    const tick = r1.use(leaseResource({ source: "s3" }))!;
    expect(tick.signal).toBe(signals.get("s3"));

    // r2 joins; r1's renewal sheds down to the even share (the last two keys): the idle s2 at
    // once, its work ended before the release; s3 after the window of its tick.
    await r2.renewNow();
    clocks.r1.advance(LEASE_MS / 3);
    await r1.renewNow();
    expect(atRelease).toEqual([{ key: "s2", aborted: true, held: false }]);
    expect(signals.get("s2")?.reason).toMatchObject({ code: "KW_STORE_LEASE_LOST" });
    expect(String(signals.get("s2")?.reason)).toMatch(/given to a replica that joined/);
    expect(tick.stopping?.aborted).toBe(true);
    expect(tick.signal?.aborted).toBe(false);
    expect(r1.holds(leaseResource({ source: "s3" }))).toBeUndefined();
    // The renewed leases go on under the same signal: a tick in flight is not cut by a renewal.
    for (const key of ["s0", "s1"]) {
      expect(signals.get(key)?.aborted, key).toBe(false);
      expect(signalOf(r1, key), key).toBe(signals.get(key));
    }
    await r2.renewNow();
    expect(signalOf(r2, "s2")).toBeDefined();
    // s3 stays r1's, renewed, while its tick commits its window.
    expect(signalOf(r2, "s3")).toBeUndefined();
    clocks.r1.advance(LEASE_MS / 3);
    await r1.renewNow();
    expect(await ownerOf("s3")).toBe("r1");
    tick.done();
    clocks.r1.advance(LEASE_MS / 3);
    await r1.renewNow();
    expect(await ownerOf("s3")).toBeUndefined();
    expect(tick.signal?.aborted).toBe(true);
    expect(atRelease.at(-1)).toEqual({ key: "s3", aborted: true, held: false });
    await r2.renewNow();
    expect(signalOf(r2, "s3")).toBeDefined();

    // r1 stops renewing while its clock stands still (a pause): r2 takes s0 and s1 over after
    // they expire; r1's next renewal learns it and ends their work.
    clocks.r2.advance(2 * LEASE_MS + 1);
    await r2.renewNow();
    expect(signalOf(r2, "s0")).toBeDefined();
    await r1.renewNow();
    expect(signals.get("s0")?.aborted).toBe(true);
    expect(String(signals.get("s0")?.reason)).toMatch(/taken over/);
    expect(signalOf(r1, "s0")).toBeUndefined();
  });

  it("write the cursor advance of a tick that ended while the renewal waited on the database before giving its lease to a replica that joined", async () => {
    const clocks = { r1: fakeClock(), r2: fakeClock() };
    const r1Keeper: { current?: Ownership } = {};
    const { keeper: r1, store } = await keeperOf("r1", clocks.r1.now, (leases) => ({
      ...leases,
      renew: async () => {
        // A quiet window of s2 and one of s3 (deferred until a flush) commit while the renewal waits on the database.
        for (const [key, block] of [["s2", 150], ["s3", 160]] as const) {
          const tick = r1Keeper.current!.use(leaseResource({ source: key }));
          if (tick === undefined) continue;
          await store.commitWindow({ cursor: cursor(key, block), entries: [], epoch: tick.epoch });
          tick.done();
        }
        return leases.renew();
      },
    }));
    r1Keeper.current = r1;
    await r1.renewNow();
    const { keeper: r2, store: r2Store } = await keeperOf("r2", clocks.r2.now);
    await r2.renewNow();
    clocks.r1.advance(LEASE_MS / 3);
    await r1.renewNow();
    await r2.renewNow();
    // r2 holds what r1 gave back, and reads the cursors r1 reached: it does not poll those windows again.
    expect(["s2", "s3"].map((key) => r2.holds(leaseResource({ source: key })) !== undefined)).toEqual([true, true]);
    expect([(await r2Store.getCursor("s2"))?.block, (await r2Store.getCursor("s3"))?.block]).toEqual([150, 160]);
  });

  it("give each lease back under the name of its resource: a source's row is named by its key, a sink's and any other by the resource's name", async () => {
    const { keeper } = await keeperOf("r1", fakeClock().now);
    const resources = [leaseResource({ source: "s0" }), leaseResource({ sink: "hook" }), leaseResource("operational")];
    await keeper.start(resources);
    try {
      expect(resources.map((resource) => keeper.holds(resource) !== undefined)).toEqual([true, true, true]);
      // Before, a row that is neither a sink's nor a source's came back as source:operational: holds("operational") never answered.
      expect(keeper.holds(leaseResource({ source: "operational" }))).toBeUndefined();
    } finally {
      await keeper.stop();
    }
  });

  it("end the work on a lease that lapsed by the replica's clock; its renewal starts a new signal at the same epoch", async () => {
    const clock = fakeClock();
    const { keeper } = await keeperOf("r1", clock.now);
    await keeper.renewNow();
    const before = keeper.holds(leaseResource({ source: "s0" }));
    clock.advance(USABLE_MS);
    // The clock decides even before the timer has run.
    expect(keeper.holds(leaseResource({ source: "s0" }))).toBeUndefined();
    expect(before?.signal?.aborted).toBe(true);
    expect(String(before?.signal?.reason)).toMatch(/not renewed in time/);
    // Nobody took it: the renewal extends it, and the next tick runs under a new signal.
    await keeper.renewNow();
    const after = keeper.holds(leaseResource({ source: "s0" }));
    expect(after?.epoch).toBe(before?.epoch);
    expect(after?.signal).not.toBe(before?.signal);
    expect(after?.signal?.aborted).toBe(false);
    await keeper.stop();
    expect(after?.signal?.aborted).toBe(true);
  });

  it("write the cursor advances of a lease that lapsed at once, while it is still this replica's (a third of a lease before another may take it)", async () => {
    const clock = fakeClock();
    const { keeper, store } = await keeperOf("r1", clock.now);
    await keeper.renewNow();
    // A quiet window of s0: its advance waits for a flush.
    const tick = keeper.use(leaseResource({ source: "s0" }))!;
    await store.commitWindow({ cursor: cursor("s0", 150), entries: [], epoch: tick.epoch });
    tick.done();
    const reader = await pg.open(url, { replicaId: "reader", leaseMs: LEASE_MS });
    expect(await reader.getCursor("s0")).toBeUndefined();
    clock.advance(USABLE_MS);
    expect(keeper.holds(leaseResource({ source: "s0" }))).toBeUndefined();
    // No renewal, no firing's end: the lapse alone writes it.
    await waitFor(async () => (await reader.getCursor("s0"))?.block === 150, 10_000, "the lapse to write s0's cursor to PostgreSQL");
    await keeper.stop();
  });

  it("end the work on every lease at the end of its usable time, by a timer, with no renewal and no call in between", async () => {
    // Timers and the clock are faked together; the database's sockets are not timers.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const { keeper, leases } = await keeperOf("r1", Date.now);
    await keeper.renewNow();
    const held = KEYS.map((key) => signalOf(keeper, key));
    vi.advanceTimersByTime(USABLE_MS - 1);
    expect(held.map((signal) => signal?.aborted)).toEqual(KEYS.map(() => false));
    vi.advanceTimersByTime(1);
    expect(held.map((signal) => signal?.aborted)).toEqual(KEYS.map(() => true));
    // Before the lease expires: no other replica may take it yet, so no window is polled twice.
    expect((await leases.list()).map((lease) => [lease.owner, lease.expiresMs > Date.now()])).toEqual(KEYS.map(() => ["r1", true]));
  });
});
