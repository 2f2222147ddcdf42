import { beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import type { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { fakeClock, usePostgres } from "./pg-fixtures.js";

const pg = usePostgres();
let clock: ReturnType<typeof fakeClock>;
let a: PostgresStore;
let b: PostgresStore;

beforeEach(async () => {
  const url = await pg.database();
  clock = fakeClock();
  a = await pg.open(url, { replicaId: "a" }, createTestCommon({ now: clock.now }));
  b = await pg.open(url, { replicaId: "b" }, createTestCommon({ now: clock.now }));
});

const rate = { ratePerSecond: 2, burst: 3 };

describe("a sink's rate limit shared by replicas", () => {
  it("lets the replicas together take a full bucket, then one token per refill", async () => {
    expect(await a.takeSinkToken("slack", rate)).toEqual({ taken: true });
    expect(await b.takeSinkToken("slack", rate)).toEqual({ taken: true });
    expect(await a.takeSinkToken("slack", rate)).toEqual({ taken: true });
    expect(await b.takeSinkToken("slack", rate)).toEqual({ taken: false, waitMs: 500 });
    // Another sink has its own bucket.
    expect(await b.takeSinkToken("email", rate)).toEqual({ taken: true });
    clock.advance(250);
    expect(await a.takeSinkToken("slack", rate)).toEqual({ taken: false, waitMs: 250 });
    clock.advance(250);
    expect(await a.takeSinkToken("slack", rate)).toEqual({ taken: true });
    // Idle for long: the bucket fills up to its burst, not beyond.
    clock.advance(60_000);
    const outcomes = await Promise.all(Array.from({ length: 5 }, (_, i) => (i % 2 === 0 ? a : b).takeSinkToken("slack", rate)));
    expect(outcomes.filter((o) => o.taken)).toHaveLength(3);
  });

  it("never hands out more tokens than the bucket holds to replicas taking at the same moment", async () => {
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).takeSinkToken("webhook", { ratePerSecond: 1, burst: 5 })));
    expect(outcomes.filter((o) => o.taken)).toHaveLength(5);
  });
});

describe("a sink's concurrency shared by replicas", () => {
  const slots = { concurrency: 2, holdMs: 30_000 };

  it("gives the replicas together at most `concurrency` deliveries at a time", async () => {
    expect(await a.takeSinkSlot("slack", slots)).toBe(0);
    expect(await b.takeSinkSlot("slack", slots)).toBe(1);
    expect(await a.takeSinkSlot("slack", slots)).toBeUndefined();
    // Only the holder gives a slot back.
    await a.releaseSinkSlot("slack", 1);
    expect(await a.takeSinkSlot("slack", slots)).toBeUndefined();
    await b.releaseSinkSlot("slack", 1);
    expect(await a.takeSinkSlot("slack", slots)).toBe(1);
    // A holder that died: its slot lapses.
    clock.advance(30_000);
    expect(await b.takeSinkSlot("slack", slots)).toBe(0);
  });

  it("never gives one slot to two replicas asking at the same moment", async () => {
    const taken = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).takeSinkSlot("webhook", { concurrency: 3, holdMs: 30_000 })));
    expect(taken.filter((slot) => slot !== undefined).sort()).toEqual([0, 1, 2]);
  });
});
