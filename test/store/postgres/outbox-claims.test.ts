import { beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import type { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { cursor, entry } from "../fixtures/sample.js";
import { fakeClock, usePostgres } from "./pg-fixtures.js";

const pg = usePostgres();
const CLAIM_MS = 120_000;
let url: string;
let clock: ReturnType<typeof fakeClock>;
let a: PostgresStore;
let b: PostgresStore;

beforeEach(async () => {
  url = await pg.database();
  // Entries of the fixture are due at 2025-01-01T00:00:00Z; the clock starts an hour later.
  clock = fakeClock(Date.UTC(2025, 0, 1, 1));
  a = await pg.open(url, { replicaId: "a" }, createTestCommon({ now: clock.now }));
  b = await pg.open(url, { replicaId: "b" }, createTestCommon({ now: clock.now }));
});

const ids = (entries: Array<{ id: string }>) => entries.map((e) => e.id);

describe("outbox claims", () => {
  it("give each due pending entry of a sink to one replica at a time, oldest first", async () => {
    const later = new Date(Date.UTC(2025, 0, 1, 2)).toISOString();
    await a.commitWindow({
      cursor: cursor("s1", 1),
      entries: [...Array.from({ length: 6 }, (_, i) => entry(`e${i}`, "slack")), entry("e9", "email"), { ...entry("late", "slack"), next_attempt_at: later }],
    });
    expect(ids(await a.claimOutbox("slack", { limit: 4, claimMs: CLAIM_MS }))).toEqual(["e0:slack", "e1:slack", "e2:slack", "e3:slack"]);
    // Not due yet, another sink, or claimed by a: not b's.
    expect(ids(await b.claimOutbox("slack", { limit: 10, claimMs: CLAIM_MS }))).toEqual(["e4:slack", "e5:slack"]);
    expect(await a.claimOutbox("slack", { limit: 10, claimMs: CLAIM_MS })).toEqual([]);

    // An outcome ends the claim: a failure is claimable again once due, a delivery never.
    const retryAt = new Date(clock.now() + 60_000).toISOString();
    await a.updateOutbox([
      { id: "e0:slack", kind: "delivered", at: new Date(clock.now()).toISOString() },
      { id: "e1:slack", kind: "failed", at: new Date(clock.now()).toISOString(), error: "HTTP 503", next_attempt_at: retryAt },
    ]);
    expect(await b.claimOutbox("slack", { limit: 10, claimMs: CLAIM_MS })).toEqual([]);
    clock.advance(60_000);
    expect(ids(await b.claimOutbox("slack", { limit: 10, claimMs: CLAIM_MS }))).toEqual(["e1:slack"]);

    // a dies holding e2 and e3: their claims lapse, and b sends them (b's own lapsed claims on e4, e5 too).
    clock.advance(CLAIM_MS - 30_000);
    expect(ids(await b.claimOutbox("slack", { limit: 10, claimMs: CLAIM_MS }))).toEqual(["e2:slack", "e3:slack", "e4:slack", "e5:slack"]);
  });

  it("can be given back before they lapse", async () => {
    await a.commitWindow({ cursor: cursor("s1", 1), entries: [entry("e0", "slack"), entry("e1", "slack")] });
    await a.claimOutbox("slack", { limit: 2, claimMs: CLAIM_MS });
    // b cannot release a's claims; a can.
    await b.releaseOutboxClaims(["e0:slack", "e1:slack"]);
    expect(await b.claimOutbox("slack", { limit: 2, claimMs: CLAIM_MS })).toEqual([]);
    await a.releaseOutboxClaims(["e0:slack"]);
    expect(ids(await b.claimOutbox("slack", { limit: 2, claimMs: CLAIM_MS }))).toEqual(["e0:slack"]);
  });

  it("never hand one entry to two replicas claiming at the same moment", async () => {
    await a.commitWindow({ cursor: cursor("s1", 1), entries: Array.from({ length: 200 }, (_, i) => entry(`e${i}`, "slack")) });
    const got: Record<string, string[]> = { a: [], b: [] };
    const drain = async (store: PostgresStore, name: string) => {
      for (;;) {
        const batch = await store.claimOutbox("slack", { limit: 7, claimMs: CLAIM_MS });
        if (batch.length === 0) return;
        got[name]!.push(...ids(batch));
      }
    };
    await Promise.all([drain(a, "a"), drain(b, "b"), drain(a, "a"), drain(b, "b")]);
    const all = [...got.a!, ...got.b!];
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
  });

  it("check their arguments", async () => {
    await expect(a.claimOutbox("slack", { limit: 0, claimMs: CLAIM_MS })).rejects.toThrow(TypeError);
    await expect(a.claimOutbox("slack", { limit: 1, claimMs: 0 })).rejects.toThrow(TypeError);
  });
});
