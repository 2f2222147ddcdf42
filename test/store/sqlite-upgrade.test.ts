import BetterSqlite3 from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import { SQLITE_SCHEMA_VERSION } from "../../src/store/sqlite-schema.js";
import { makeTempDir } from "./fixtures/temp-dir.js";

/**
 * A store written by the version before label silences and time intervals (schema 3): its
 * `suppressed` table refused 'muted' and its `silences` table required a rule and had no
 * matchers. Made here from today's store by putting those two tables back as they were.
 */
async function storeOfVersion3(path: string): Promise<void> {
  await (await openStore(createTestCommon(), { path })).close();
  const db = new BetterSqlite3(path);
  db.exec(`
DROP TABLE witnesses;
DROP TRIGGER outbox_note_delete;
DROP TABLE suppressed;
CREATE TABLE suppressed (entry_id TEXT PRIMARY KEY, at TEXT NOT NULL, reason TEXT NOT NULL CHECK (reason IN ('cooldown', 'silence', 'inhibited'))) WITHOUT ROWID;
CREATE TRIGGER outbox_note_delete AFTER DELETE ON outbox BEGIN DELETE FROM suppressed WHERE entry_id = old.id; END;
DROP TABLE silences;
CREATE TABLE silences (id TEXT PRIMARY KEY, rule TEXT NOT NULL, match TEXT NOT NULL, reason TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, expires_ms INTEGER NOT NULL, removed_at TEXT, suppressed INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
INSERT INTO silences (id, rule, match, reason, created_at, expires_at, expires_ms) VALUES ('sil_00000001', 'outflow', '{"to":"0xabc"}', 'kept', '2030-01-01T00:00:00.000Z', '2030-01-02T00:00:00.000Z', ${Date.parse("2030-01-02T00:00:00.000Z")});
INSERT INTO suppressed (entry_id, at, reason) VALUES ('a1:slack', '2030-01-01T00:00:00.000Z', 'silence');
`);
  db.pragma("user_version = 3");
  db.close();
}

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

it("a store of schema version 3 is upgraded by the first process that opens it to write, keeping its rows; a reader before that is told to start the daemon", async () => {
  const path = join(temp.dir, "kaiawatch.db");
  await storeOfVersion3(path);

  const reading = await openStore(createTestCommon(), { path, readOnly: true }).then(
    () => undefined,
    (error: unknown) => error as Error & { code: string },
  );
  expect(reading?.code).toBe("KW_STORE_VERSION");
  expect(reading?.message).toContain("Start the daemon (kaiawatch run) once: it upgrades the store");

  const store = await openStore(createTestCommon(), { path });
  await store.close();
  const db = new BetterSqlite3(path);
  try {
    expect(db.pragma("user_version", { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    expect(db.prepare("SELECT id, rule, match, matchers FROM silences").all()).toEqual([{ id: "sil_00000001", rule: "outflow", match: '{"to":"0xabc"}', matchers: null }]);
    expect(db.prepare("SELECT entry_id, reason FROM suppressed").all()).toEqual([{ entry_id: "a1:slack", reason: "silence" }]);
    // What version 3 refused: a silence on labels only, and an alert muted by a time interval.
    db.prepare("INSERT INTO silences (id, rule, match, matchers, reason, created_at, expires_at, expires_ms) VALUES ('sil_00000002', NULL, '{}', '[\"severity=\\\"warning\\\"\"]', 'labels', 'a', 'b', 1)").run();
    db.prepare("INSERT INTO suppressed (entry_id, at, reason) VALUES ('a2:slack', 'a', 'muted')").run();
    // The trigger made again with its table: removing an entry still removes its note.
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name = 'outbox_note_delete'").all()).toHaveLength(1);
  } finally {
    db.close();
  }
  // Open again: nothing left to upgrade.
  await (await openStore(createTestCommon(), { path })).close();
});

it("a store of schema version 4 gets the witnesses' table by its upgrade and keeps its rows; a reader before that is told to start the daemon", async () => {
  const path = join(temp.dir, "kaiawatch.db");
  const before = await openStore(createTestCommon(), { path });
  await before.commitWindow({ cursor: { key: "s1", watch: "w", source: "event_logs", description: "d", block: 9, updated_at: "2030-01-01T00:00:00.000Z" }, entries: [] });
  await before.close();
  const old = new BetterSqlite3(path);
  old.exec("DROP TABLE witnesses");
  old.pragma("user_version = 4");
  old.close();

  await expect(openStore(createTestCommon(), { path, readOnly: true })).rejects.toMatchObject({ code: "KW_STORE_VERSION" });
  const store = await openStore(createTestCommon(), { path });
  try {
    expect((await store.getCursor("s1"))?.block).toBe(9);
    const witness = { alert_id: "a1", role: "node" as const, watch: "w", family: "event_logs", rule: "r", block: 10, record_key: "k", summary: "s", transaction_hash: null, seen_at: "2030-01-01T00:00:00.000Z" };
    await store.commitWindow({ cursor: { key: "s1", watch: "w", source: "event_logs", description: "d", block: 10, updated_at: "2030-01-01T00:00:00.000Z" }, entries: [], witnesses: [witness] });
    expect(await store.listWitnesses({ missed: false })).toEqual([witness]);
  } finally {
    await store.close();
  }
});
