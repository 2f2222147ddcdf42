import { copyFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it } from "vitest";
import { inspectStoreFiles } from "../../../src/store/store-files.js";
import { makeTempDir } from "../fixtures/temp-dir.js";

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

/**
 * A store killed between checkpoints: its log's last commit has grown the database past the
 * file, and its freelist starts on a page that lives only in the log. Healthy, and SQLite
 * opens it; the check at open refused it as "freelist damaged" (found by the short torture
 * test, a kill -9 mid-run: the daemon would have refused to start after a crash).
 */
it("accepts a freelist whose pages are in the write-ahead log, beyond the database file", () => {
  const live = join(temp.dir, "live.db");
  const db = new Database(live);
  db.pragma("journal_mode = WAL");
  db.pragma("wal_autocheckpoint = 0");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)");
  db.pragma("wal_checkpoint(TRUNCATE)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) insert.run(Buffer.alloc(1000, i % 251));
  })();
  db.exec("DELETE FROM t WHERE id > 100");
  // A copy while the connection is open: the files as a kill -9 leaves them.
  const killed = join(temp.dir, "killed.db");
  copyFileSync(live, killed);
  copyFileSync(`${live}-wal`, `${killed}-wal`);
  const filePages = statSync(killed).size / 4096;
  const reader = new Database(killed, { readonly: true });
  const freePages = reader.pragma("freelist_count", { simple: true }) as number;
  reader.close();
  db.close();
  expect(freePages).toBeGreaterThan(0);
  expect(filePages).toBeLessThan(10);

  expect(inspectStoreFiles(killed).problem).toBeUndefined();
});
