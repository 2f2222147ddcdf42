import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import { createSchema, importAll } from "../../src/store/sqlite-schema.js";
import BetterSqlite3 from "better-sqlite3";
import { tempDir } from "../helpers/harness.js";
import { cursor, entry } from "./fixtures/sample.js";

/** The file store's cooldown stamps and suppression notes: one meta row each (cooldown-rows.ts). */
const dirs: Array<ReturnType<typeof tempDir>> = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});
const storePath = () => {
  const dir = tempDir();
  dirs.push(dir);
  return join(dir.path, "store.json");
};

describe("cooldown rows in the file store", () => {
  it("keep one stamp per (sink, rule, key), never going back in time, across a reopen; pruned by age", async () => {
    const path = storePath();
    const store = await openStore(createTestCommon(), { path });
    await store.writeCooldowns([
      { sink: "slack", rule: "r", key: "", at: 1000, entryId: "a1:slack" },
      { sink: "slack", rule: "r", key: "0x/\u0000odd", at: 2000 },
      { sink: "mail", rule: "r", key: "", at: 3000 },
    ]);
    await store.writeCooldowns([{ sink: "slack", rule: "r", key: "", at: 500 }]);
    await store.close();
    const again = await openStore(createTestCommon(), { path });
    const keys = [
      { rule: "r", key: "" },
      { rule: "r", key: "0x/\u0000odd" },
      { rule: "r", key: "none" },
    ];
    expect(await again.readCooldowns("slack", keys)).toEqual([
      { sink: "slack", rule: "r", key: "", at: 1000, entryId: "a1:slack" },
      { sink: "slack", rule: "r", key: "0x/\u0000odd", at: 2000 },
    ]);
    expect(await again.pruneCooldowns(2500)).toBe(2);
    expect(await again.readCooldowns("slack", keys)).toEqual([]);
    expect(await again.readCooldowns("mail", keys)).toEqual([{ sink: "mail", rule: "r", key: "", at: 3000 }]);
    await again.close();
  });

  it("keep a suppression note beside its delivered entry until the entry is pruned", async () => {
    const store = await openStore(createTestCommon(), { path: storePath() });
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack"), entry("a2", "slack")] });
    const at = "2025-01-01T00:01:00.000Z";
    await store.updateOutbox([
      { id: "a1:slack", kind: "delivered", at, suppressed: "silence" },
      { id: "a2:slack", kind: "delivered", at },
    ]);
    expect(await store.suppressions(["a1:slack", "a2:slack"])).toEqual({ "a1:slack": { at, reason: "silence" } });
    expect(await store.pruneDelivered("2025-02-01T00:00:00.000Z")).toBe(2);
    expect(await store.suppressions(["a1:slack"])).toEqual({});
    await store.close();
  });

  it("turn the one-value cooldown book of an earlier release into rows at a writable open", async () => {
    const path = storePath();
    const db = new BetterSqlite3(path);
    createSchema(db);
    importAll(db, {
      cursors: [],
      outbox: [{ ...entry("a1", "slack"), state: "delivered", attempts: 1, delivered_at: "2025-01-01T00:01:00.000Z" }],
      meta: [["notify.cooldown", { last: { slack: { r: { "": 1000 } } }, admitted: ["x:slack"], suppressed: { "a1:slack": { at: "2025-01-01T00:01:00.000Z", reason: "cooldown" }, "gone:slack": { at: "2025-01-01T00:01:00.000Z", reason: "silence" } } }]],
    });
    db.close();
    const store = await openStore(createTestCommon(), { path });
    expect(await store.getMeta("notify.cooldown")).toBeUndefined();
    expect(await store.readCooldowns("slack", [{ rule: "r", key: "" }])).toEqual([{ sink: "slack", rule: "r", key: "", at: 1000 }]);
    expect(await store.suppressions(["a1:slack", "gone:slack"])).toEqual({ "a1:slack": { at: "2025-01-01T00:01:00.000Z", reason: "cooldown" } });
    await store.close();
  });
});
