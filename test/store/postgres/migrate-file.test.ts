import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { openSqliteStore, openStore } from "../../../src/store/open-store.js";
import { migrateFileToPostgres } from "../../../src/store/migrate-to-postgres.js";
import { newSilence } from "../../../src/notify/silences.js";
import { tempDir } from "../../helpers/harness.js";
import { cursor, entry } from "../fixtures/sample.js";
import { usePostgres } from "./pg-fixtures.js";

const pg = usePostgres();

/** A file store with two cursors, entries in every state, a digest and meta. */
async function fileStore(): Promise<string> {
  const dir = tempDir();
  const path = join(dir.path, "store.json");
  const store = await openStore(createTestCommon(), { path });
  await store.commitWindow({ cursor: cursor("s1", 10), entries: [entry("a1", "slack"), entry("a2", "slack"), entry("a3", "mail")] });
  await store.commitWindow({ cursor: cursor("s2", 20), entries: [entry("a4", "slack")] });
  await store.updateOutbox([
    { id: "a1:slack", kind: "delivered", at: "2025-01-01T00:01:00.000Z", history: { delivery_id: "grp_0", attempt: 1, status: 200, latency_ms: 12 } },
    { id: "a2:slack", kind: "dead", at: "2025-01-01T00:01:00.000Z", reason: "410 gone", history: { delivery_id: "a2", attempt: 1, status: 410, latency_ms: 31, error: "answered HTTP 410" } },
    { id: "a4:slack", kind: "group", group_id: "grp_1" },
  ]);
  await store.setMeta("credits", { day: "2025-01-01", spent: 42, byOperation: {} });
  await store.close();
  return path;
}

describe("kaiawatch store migrate (file → PostgreSQL)", () => {
  it("copies cursors, every entry with its state and order, and meta; a second copy is refused, and with --force repeats nothing", async () => {
    const from = await fileStore();
    const to = await pg.database();
    const common = createTestCommon();
    expect(await migrateFileToPostgres(common, { from, to })).toEqual({ cursors: 2, entries: 4, meta: 1 });

    const file = await openStore(common, { path: from, readOnly: true });
    const target = await pg.open(to);
    expect(await target.listCursors()).toEqual(await file.listCursors());
    expect(await target.listOutbox()).toEqual(await file.listOutbox());
    expect(await target.getMeta("credits")).toEqual({ day: "2025-01-01", spent: 42, byOperation: {} });
    expect(await target.listAttempts()).toEqual(await file.listAttempts());
    expect((await target.listAttempts()).length).toBe(2);
    await file.close();

    await expect(migrateFileToPostgres(common, { from, to })).rejects.toMatchObject({ code: "KW_STORE_MIGRATE_TARGET" });
    expect(await migrateFileToPostgres(common, { from, to, force: true })).toEqual({ cursors: 0, entries: 0, meta: 0 });
    expect(await target.countOutbox()).toBe(4);
    expect((await target.listAttempts()).length).toBe(2);
  });

  it("carries the cooldown stamps, the suppression notes, the silences, the open balance episodes and the audit's witnesses into their tables", async () => {
    const dir = tempDir();
    const from = join(dir.path, "store.json");
    const file = await openSqliteStore(createTestCommon(), { path: from });
    await file.commitWindow({ cursor: cursor("s1", 10), entries: [entry("a1", "slack"), entry("a2", "slack")] });
    await file.updateOutbox([{ id: "a2:slack", kind: "delivered", at: "2025-01-01T00:01:00.000Z", suppressed: "cooldown" }]);
    await file.writeCooldowns([{ sink: "slack", rule: "big-outflow", key: "0xaa", at: 1000, entryId: "a1:slack" }]);
    const silence = newSilence({ rule: "big-outflow", match: { to: "0xaa" }, forMs: 3600_000, reason: "sweep", now: Date.parse("2025-01-01T00:00:00.000Z") });
    await file.silences.add(silence);
    await file.silences.count(new Map([[silence.id, 2]]));
    const episode = { rule: "payer-low", address: "0x00000000000000000000000000000000000fee00", asset: "KAIA", alert: entry("b1", "pd").alert, clear: 1, repeats: 2, reminded_at: "2025-01-01T02:00:00.000Z" };
    await file.commitBalanceEpisodes({ changes: [{ ...episode, expect: null, next: { alert: episode.alert, clear: 1, repeats: 2, reminded_at: episode.reminded_at } }], entries: [] });
    const witness = (alertId: string) => ({ alert_id: alertId, role: "node" as const, watch: "treasury", family: "event_logs", rule: "big-transfer", block: 9, record_key: `k-${alertId}`, summary: "s", transaction_hash: null, seen_at: "2025-01-01T00:00:00.000Z" });
    await file.commitWindow({ cursor: cursor("s1", 11), entries: [], witnesses: [witness("w1"), witness("w2")] });
    await file.settleWitnesses({ missed: [{ alert_id: "w2", role: "node", entries: [] }], at: "2025-01-01T00:02:00.000Z" });
    await file.close();

    const to = await pg.database();
    await migrateFileToPostgres(createTestCommon(), { from, to });
    const target = await pg.open(to);
    expect(await target.readCooldowns("slack", [{ rule: "big-outflow", key: "0xaa" }])).toEqual([{ sink: "slack", rule: "big-outflow", key: "0xaa", at: 1000, entryId: "a1:slack" }]);
    expect(await target.suppressions(["a1:slack", "a2:slack"])).toEqual({ "a2:slack": { at: "2025-01-01T00:01:00.000Z", reason: "cooldown" } });
    expect(await target.silences.active(Date.parse("2025-01-01T00:10:00.000Z"))).toEqual([{ ...silence, suppressed: 2 }]);
    // An episode open when the store moved goes on under its id: its resolve closes the same incident.
    expect(await target.listBalanceEpisodes()).toEqual([episode]);
    // The audit's witnesses: one still open, one reported missed.
    expect(await target.listWitnesses({ missed: false })).toEqual([witness("w1")]);
    expect(await target.listWitnesses({ missed: true })).toEqual([{ ...witness("w2"), missed_at: "2025-01-01T00:02:00.000Z" }]);
    dir.remove();
  });

  it("refuses a file that a running daemon holds, and copies nothing", async () => {
    const from = await fileStore();
    const to = await pg.database();
    const running = await openStore(createTestCommon(), { path: from });
    try {
      await expect(migrateFileToPostgres(createTestCommon(), { from, to })).rejects.toMatchObject({ code: "KW_STORE_LOCKED" });
    } finally {
      await running.close();
    }
  });
});
