import { existsSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import { logCapture } from "../helpers/harness.js";
import { cursor } from "./fixtures/sample.js";
import { makeTempDir } from "./fixtures/temp-dir.js";

/**
 * Issue 30: the default store was ./data/kaiawatch.json, an SQLite database under a JSON name.
 * The default is kaiawatch.db now; a store of the old name is renamed once, with its WAL.
 */
let temp: ReturnType<typeof makeTempDir>;
let legacy: string;
let path: string;
beforeEach(() => {
  temp = makeTempDir();
  legacy = join(temp.dir, "kaiawatch.json");
  path = join(temp.dir, "kaiawatch.db");
});
afterEach(() => temp.remove());

describe("a store of the earlier default name", () => {
  it("is renamed once at a writable open, cursors and all, and said so; a read-only open reads it in place first", async () => {
    const old = await openStore(createTestCommon(), { path: legacy });
    await old.setCursor(cursor("src_a", 41));
    await old.close();

    const reader = await openStore(createTestCommon(), { path, renameFrom: legacy, readOnly: true });
    expect((await reader.getCursor("src_a"))?.block).toBe(41);
    await reader.close();
    expect(existsSync(path)).toBe(false);

    const log = logCapture();
    const store = await openStore(createTestCommon({ logger: pino({ level: "info" }, log.destination) }), { path, renameFrom: legacy });
    expect((await store.getCursor("src_a"))?.block).toBe(41);
    await store.close();
    expect(existsSync(legacy)).toBe(false);
    expect(existsSync(`${legacy}-wal`)).toBe(false);
    expect(log.lines.filter((l) => l.msg === "the store was renamed to its new default name (an SQLite database, not JSON); set store.path to keep another name")).toEqual([expect.objectContaining({ from: legacy, to: path, level: 40 })]);

    // Once: the next open finds the new name and says nothing.
    const again = logCapture();
    const reopened = await openStore(createTestCommon({ logger: pino({ level: "info" }, again.destination) }), { path, renameFrom: legacy });
    expect((await reopened.getCursor("src_a"))?.block).toBe(41);
    await reopened.close();
    expect(again.lines.filter((l) => String(l.msg).includes("renamed"))).toEqual([]);
  });

  it("is left alone while a daemon still holds it under the old name", async () => {
    const running = await openStore(createTestCommon(), { path: legacy });
    try {
      await expect(openStore(createTestCommon(), { path, renameFrom: legacy })).rejects.toMatchObject({ code: "KW_STORE_LOCKED" });
      expect(existsSync(legacy)).toBe(true);
      expect(existsSync(path)).toBe(false);
    } finally {
      await running.close();
    }
  });
});
