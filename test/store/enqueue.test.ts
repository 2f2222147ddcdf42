import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/types.js";
import { readOnDisk } from "./fixtures/on-disk.js";
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

async function openTracked(readOnly = false): Promise<Store> {
  const store = await openStore(createTestCommon(), { path, readOnly });
  open.push(store);
  return store;
}

describe("enqueue (replay --send, operational alerts)", () => {
  it("adds entries durably, leaves every cursor where it was, and skips ids already in the outbox", async () => {
    const store = await openTracked();
    await store.commitWindow({ cursor: cursor("s1", 50), entries: [entry("a1", "slack")] });
    await store.setCursor(cursor("s2", 7));
    const cursorsBefore = (await store.listCursors());

    expect(await store.enqueue([entry("a1", "slack"), entry("a2", "slack"), entry("a2", "email"), entry("a2", "email")])).toEqual({ added: 2 });
    expect((await store.listCursors())).toEqual(cursorsBefore);
    expect((await store.listOutbox({ state: "pending" })).map((e) => e.id)).toEqual(["a1:slack", "a2:slack", "a2:email"]);
    expect((await store.listOutbox({ sink: "email", state: "pending" })).map((e) => e.id)).toEqual(["a2:email"]);

    // Durable: the file holds them (the call resolved after the write), with the cursors unchanged.
    const disk = readOnDisk(path);
    expect(disk.outbox.map((e) => e.id)).toEqual(["a1:slack", "a2:slack", "a2:email"]);
    expect(Object.values(disk.cursors).map((c) => [c.key, c.block])).toEqual([["s1", 50], ["s2", 7]]);
  });

  it("does not add a delivered alert again, so a replay cannot resend what the daemon delivered", async () => {
    const store = await openTracked();
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
    await store.updateOutbox([{ id: "a1:slack", kind: "delivered", at: new Date().toISOString() }]);
    expect(await store.enqueue([entry("a1", "slack")])).toEqual({ added: 0 });
    expect((await store.listOutbox()).map((e) => [e.id, e.state])).toEqual([["a1:slack", "delivered"]]);
  });

  it("is refused on a read-only store", async () => {
    await (await openTracked()).close();
    const reader = await openTracked(true);
    await expect(reader.enqueue([entry("a1", "slack")])).rejects.toMatchObject({ code: "KW_STORE_READ_ONLY" });
  });
});
