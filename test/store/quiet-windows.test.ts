import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/types.js";
import { readOnDisk } from "./fixtures/on-disk.js";
import { cursor, entry } from "./fixtures/sample.js";
import { makeTempDir } from "./fixtures/temp-dir.js";

/**
 * Windows without alerts: their cursor advances owe no delivery, so they wait for the next
 * write instead of each paying one (10,000 quiet sources, one write a tick); a window with
 * alerts is still durable when its commit resolves, and carries the quiet advances with it.
 */
let temp: ReturnType<typeof makeTempDir>;
let path: string;
let store: Store;

beforeEach(async () => {
  temp = makeTempDir();
  path = join(temp.dir, "kaiawatch.json");
  store = await openStore(createTestCommon(), { path });
});
afterEach(async () => {
  await store.close().catch(() => undefined);
  temp.remove();
});

const onDisk = () => readOnDisk(path);

describe("windows without alerts", () => {
  it("move their cursors at once and reach the file together in one write at flush", async () => {
    const before = (await store.stats()).writes;
    for (let i = 0; i < 1_000; i++) await store.commitWindow({ cursor: cursor(`s${i}`, 100 + i), entries: [] });
    expect((await store.getCursor("s999"))?.block).toBe(1099);
    expect((await store.stats()).cursors).toBe(1_000);
    expect((await store.stats()).writes).toBe(before);
    await store.flush();
    expect((await store.stats()).writes - before).toBe(1);
    expect(Object.keys(onDisk().cursors)).toHaveLength(1_000);
    expect(onDisk().cursors.s999?.block).toBe(1099);
    // Nothing deferred any more: a second flush writes nothing.
    await store.flush();
    expect((await store.stats()).writes - before).toBe(1);
  });

  it("ride along with the next window that has alerts, which is durable when its commit resolves", async () => {
    await store.commitWindow({ cursor: cursor("quiet", 50), entries: [] });
    await store.commitWindow({ cursor: cursor("busy", 7), entries: [entry("a1", "slack")] });
    const data = onDisk();
    expect(data.cursors.quiet?.block).toBe(50);
    expect(data.cursors.busy?.block).toBe(7);
    expect(data.outbox.map((e) => e.id)).toEqual(["a1:slack"]);
  });

  it("are written by close()", async () => {
    await store.commitWindow({ cursor: cursor("quiet", 12), entries: [] });
    await store.close();
    expect(onDisk().cursors.quiet?.block).toBe(12);
  });

  it("made while a write is in flight are in a later write, not lost with it", async () => {
    const first = store.commitWindow({ cursor: cursor("busy", 1), entries: [entry("a1", "slack")] });
    // The write of "busy" starts on the next turn; this quiet advance comes after it has started.
    await new Promise((resolve) => setImmediate(resolve));
    await store.commitWindow({ cursor: cursor("quiet", 99), entries: [] });
    await first;
    await store.flush();
    expect(onDisk().cursors.quiet?.block).toBe(99);
  });
});
