import { describe, expect, it } from "vitest";
import { readOnDisk } from "./fixtures/on-disk.js";
import { cursor, entry } from "./fixtures/sample.js";
import { storeFilePerTest } from "./fixtures/store-file.js";

const file = storeFilePerTest();

describe("enqueue (replay --send, operational alerts)", () => {
  it("adds entries durably, leaves every cursor where it was, and skips ids already in the outbox", async () => {
    const store = await file.open();
    await store.commitWindow({ cursor: cursor("s1", 50), entries: [entry("a1", "slack")] });
    await store.setCursor(cursor("s2", 7));
    const cursorsBefore = (await store.listCursors());

    expect(await store.enqueue([entry("a1", "slack"), entry("a2", "slack"), entry("a2", "email"), entry("a2", "email")])).toEqual({ added: 2 });
    expect((await store.listCursors())).toEqual(cursorsBefore);
    expect((await store.listOutbox({ state: "pending" })).map((e) => e.id)).toEqual(["a1:slack", "a2:slack", "a2:email"]);
    expect((await store.listOutbox({ sink: "email", state: "pending" })).map((e) => e.id)).toEqual(["a2:email"]);

    // Durable: the file holds them (the call resolved after the write), with the cursors unchanged.
    const disk = readOnDisk(file.path);
    expect(disk.outbox.map((e) => e.id)).toEqual(["a1:slack", "a2:slack", "a2:email"]);
    expect(Object.values(disk.cursors).map((c) => [c.key, c.block])).toEqual([["s1", 50], ["s2", 7]]);
  });

  it("does not add a delivered alert again, so a replay cannot resend what the daemon delivered", async () => {
    const store = await file.open();
    await store.commitWindow({ cursor: cursor("s1", 1), entries: [entry("a1", "slack")] });
    await store.updateOutbox([{ id: "a1:slack", kind: "delivered", at: new Date().toISOString() }]);
    expect(await store.enqueue([entry("a1", "slack")])).toEqual({ added: 0 });
    expect((await store.listOutbox()).map((e) => [e.id, e.state])).toEqual([["a1:slack", "delivered"]]);
  });

  it("is refused on a read-only store", async () => {
    await (await file.open()).close();
    const reader = await file.open({ readOnly: true });
    await expect(reader.enqueue([entry("a1", "slack")])).rejects.toMatchObject({ code: "KW_STORE_READ_ONLY" });
  });
});
