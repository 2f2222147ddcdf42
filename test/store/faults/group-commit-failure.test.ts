import { join } from "node:path";
import type { Database } from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { openSqliteStore } from "../../../src/store/open-store.js";
import type { SqliteStore } from "../../../src/store/sqlite-store.js";
import { cursor, entry } from "../fixtures/sample.js";
import { makeTempDir } from "../fixtures/temp-dir.js";

/**
 * One commit is shared by every change of the moment (group-commit.ts). When one caller's
 * change fails with a disk error, SQLite's rollback takes the others' changes with it: each
 * of those callers must be told, not left waiting for a later write that succeeds without
 * their change (a small probe of the disk did, and a cursor move or a silence was reported
 * done, and lost).
 *
 * The disk error is SQLite's own SQLITE_FULL, as on a full disk: `max_page_count` set to the
 * database's current size lets a change that fits in its pages through (the cursor, the
 * silence) and fails one that needs new pages (a large enqueue) at its statement, inside the
 * shared transaction. Raised again, the disk takes the next (probe) write, as a disk that a
 * moment later has room again.
 */
const temps: Array<ReturnType<typeof makeTempDir>> = [];
const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => undefined);
  for (const temp of temps.splice(0)) temp.remove();
});

async function openFresh(): Promise<{ store: SqliteStore; path: string }> {
  const temp = makeTempDir();
  temps.push(temp);
  const path = join(temp.dir, "kaiawatch.json");
  const store = await openSqliteStore(createTestCommon(), { path });
  stores.push(store);
  return { store, path };
}

/** The store's own connection: the seam that sets SQLite's page limit. */
function connectionOf(store: SqliteStore): Database {
  return (store as unknown as { db: Database }).db;
}

const settle = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error as Error & { code?: string } }),
  );

describe("a group commit that one caller's disk error rolled back", () => {
  it("tells every caller whose change went with it, even when the next write succeeds", async () => {
    const { store, path } = await openFresh();
    await store.setCursor(cursor("src_a", 10));
    await store.silences.add({ id: "before", rule: "big-outflow", match: {}, reason: "kept", created_at: "2025-01-01T00:00:00.000Z", expires_at: "2099-01-01T00:00:00.000Z" });

    const db = connectionOf(store);
    const pages = db.pragma("page_count", { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);

    // Two small changes in the transaction of the moment, waiting for its commit.
    const moved = settle(store.setCursor(cursor("src_a", 500)));
    const silenced = settle(store.silences.add({ id: "lost", rule: "big-outflow", match: {}, reason: "joined the failed batch", created_at: "2025-01-01T00:00:00.000Z", expires_at: "2099-01-01T00:00:00.000Z" }));
    // A large change in the same moment needs pages the "disk" does not have.
    const big = Array.from({ length: 200 }, (_, i) => entry(`a${i}`, "ops", { padding: 2000 }));
    const enqueued = await settle(store.enqueue(big));
    expect(enqueued.ok).toBe(false);
    if (!enqueued.ok) expect(enqueued.error.code).toBe("KW_STORE_WRITE_FAILED");

    // Room again: the next write (the group commit's probe) succeeds.
    db.pragma("max_page_count = 1073741823");
    const [move, silence] = await Promise.all([moved, silenced]);
    expect(move.ok, "the cursor move was rolled back: its caller must be told").toBe(false);
    expect(silence.ok, "the silence was rolled back: its caller must be told").toBe(false);
    if (!move.ok) expect(move.error.code).toBe("KW_STORE_WRITE_FAILED");
    if (!silence.ok) expect(silence.error.code).toBe("KW_STORE_WRITE_FAILED");

    // What the callers were told is what the store holds, now and after a reopen.
    expect((await store.getCursor("src_a"))?.block).toBe(10);
    await store.flush();
    expect(store.writeFailing()).toBe(false);
    // A change after the failure is a batch of its own, and commits.
    await store.setCursor(cursor("src_b", 7));
    await store.close();
    const reopened = await openSqliteStore(createTestCommon(), { path });
    stores.push(reopened);
    expect((await reopened.getCursor("src_a"))?.block).toBe(10);
    expect((await reopened.getCursor("src_b"))?.block).toBe(7);
    expect((await reopened.silences.active(Date.parse("2026-01-01T00:00:00.000Z"))).map((s) => s.id)).toEqual(["before"]);
  });
});
