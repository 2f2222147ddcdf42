import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import { upgradeStoreData } from "../../src/store/schema.js";
import type { Store, StoreData } from "../../src/store/types.js";
import { cursor, entry } from "./fixtures/sample.js";
import { makeTempDir } from "./fixtures/temp-dir.js";

let temp: ReturnType<typeof makeTempDir>;
let path: string;
const open: Store[] = [];

beforeEach(() => {
  temp = makeTempDir();
  path = join(temp.dir, "kaiawatch.json");
});
afterEach(async () => {
  for (const store of open.splice(0)) await store.close().catch(() => undefined);
  temp.remove();
});

async function openTracked() {
  const store = await openStore(createTestCommon(), { path });
  open.push(store);
  return store;
}

async function openFails() {
  const error = await openTracked().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error === undefined) throw new Error("the store opened");
  return error as Error & { code: string };
}

describe("a corrupt or foreign file stops start-up and is never overwritten", () => {
  it.each([
    ["a truncated file", '{"schema_version":1,"cursors":{"s1":{"key":"s1","blo', 1, 53],
    ["a syntax error on line 3", '{\n  "schema_version": 1,\n  "cursors": {,}\n}', 3, 15],
    ["an empty file", "", 1, 1],
  ])("%s: KW_STORE_CORRUPT naming the file and the position", async (_name, text, line, column) => {
    writeFileSync(path, text);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_CORRUPT");
    expect(error.message).toContain(path);
    expect(error.message).toContain(`line ${line}, column ${column}`);
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(existsSync(`${path}.lock`)).toBe(false); // the lock is released again
  });

  it.each([
    ["a JSON array", "[]"],
    ["no schema_version", '{"cursors":{},"outbox":[],"meta":{}}'],
    ["a malformed outbox", '{"schema_version":1,"cursors":{},"outbox":[{"id":1}],"meta":{}}'],
  ])("%s: KW_STORE_CORRUPT, file unchanged", async (_name, text) => {
    writeFileSync(path, text);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_CORRUPT");
    expect(error.message).toContain("not a kaiawatch store");
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("a file from a newer kaiawatch: KW_STORE_VERSION, file unchanged", async () => {
    const text = '{"schema_version":2,"cursors":{},"outbox":[],"meta":{}}';
    writeFileSync(path, text);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_VERSION");
    expect(error.message).toMatch(/schema_version 2.*knows up to 1/);
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("an older schema goes through the migrations table; without a step it is refused", async () => {
    const v0 = { schema_version: 0, state: { cursors: {}, outbox: [], meta: { a: 1 } } };
    const migrations = { 0: (d: Record<string, unknown>) => ({ ...(d.state as Record<string, unknown>) }) };
    expect(upgradeStoreData(v0, path, migrations)).toEqual({
      data: { schema_version: 1, cursors: {}, outbox: [], meta: { a: 1 } },
      migratedFrom: 0,
    });
    // The real table has no step from 0 yet: such a file is refused, untouched.
    const text = JSON.stringify(v0);
    writeFileSync(path, text);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_VERSION");
    expect(error.message).toContain("no migration from version 0");
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});

describe("a failed write", () => {
  it("rejects its callers with KW_STORE_WRITE_FAILED, keeps the last good file, and the next write persists everything", async () => {
    const store = await openTracked();
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
    const good = readFileSync(path, "utf8");

    // A directory where the temporary file must go: open(2) fails with EISDIR even for root,
    // for whom a read-only permission would not stop the write.
    mkdirSync(`${path}.tmp`);
    const results = await Promise.allSettled([
      store.commitWindow({ cursor: cursor("s1", 2), entries: [entry("a2", "slack")] }),
      store.setMeta("m", "x"),
    ]);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "KW_STORE_WRITE_FAILED" });
    }
    expect(readFileSync(path, "utf8")).toBe(good);
    expect(store.stats().failedWrites).toBe(1);
    // Memory stays the truth: the rejected window is still there for readers.
    expect(store.getCursor("s1")?.block).toBe(2);

    // Still failing: flush retries and rejects too.
    await expect(store.flush()).rejects.toMatchObject({ code: "KW_STORE_WRITE_FAILED" });
    expect(readFileSync(path, "utf8")).toBe(good);

    rmdirSync(`${path}.tmp`);
    await store.commitWindow({ cursor: cursor("s1", 3), entries: [entry("a3", "slack")] });
    const data = JSON.parse(readFileSync(path, "utf8")) as StoreData;
    expect(data.cursors.s1?.block).toBe(3);
    expect(data.outbox.map((e) => e.id)).toEqual(["a1:slack", "a2:slack", "a3:slack"]);
    expect(data.meta.m).toBe("x");
  });

  it("is retried by flush once the cause is gone, even without a new change", async () => {
    const store = await openTracked();
    mkdirSync(`${path}.tmp`);
    await expect(store.setCursor(cursor("s1", 5))).rejects.toMatchObject({ code: "KW_STORE_WRITE_FAILED" });
    rmdirSync(`${path}.tmp`);
    await store.flush();
    expect((JSON.parse(readFileSync(path, "utf8")) as StoreData).cursors.s1?.block).toBe(5);
  });

  it("of a new store fails start-up instead of the first alert", async () => {
    mkdirSync(`${path}.tmp`);
    const error = await openFails();
    expect(error.code).toBe("KW_STORE_WRITE_FAILED");
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});
