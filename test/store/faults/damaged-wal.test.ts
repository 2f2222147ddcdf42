import { closeSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../../src/common/common.js";
import { openStore } from "../../../src/store/open-store.js";
import { makeTempDir } from "../fixtures/temp-dir.js";
import { crashedStore, hashes } from "./files.js";

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

function flipByte(file: string, offset: number): void {
  const byte = readFileSync(file).subarray(offset, offset + 1);
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, Buffer.from([byte[0]! ^ 0xff]), 0, 1, offset);
  } finally {
    closeSync(fd);
  }
}

const FRAME = 24 + 4096;

describe("a damaged write-ahead log", () => {
  it.each([
    ["magic number", 0],
    ["salt", 17],
    ["checksum", 26],
  ])("is refused, not ignored, when the header's %s is damaged; every byte stays as found", async (_what, offset) => {
    const path = await crashedStore(temp.dir, "store.db");
    flipByte(`${path}-wal`, offset);
    const before = hashes(path);
    await expect(openStore(createTestCommon(), { path })).rejects.toMatchObject({ code: "KW_STORE_CORRUPT", message: expect.stringContaining("damaged header") });
    expect(hashes(path)).toEqual(before);
    await expect(openStore(createTestCommon(), { path, readOnly: true })).rejects.toMatchObject({ code: "KW_STORE_CORRUPT" });
  });

  it("is refused when a frame in the middle is damaged and commits follow it", async () => {
    const path = await crashedStore(temp.dir, "store.db");
    const frames = (statSync(`${path}-wal`).size - 32) / FRAME;
    // A byte of a page in the middle of the log: SQLite's replay would stop there.
    flipByte(`${path}-wal`, 32 + Math.floor(frames / 2) * FRAME + 24 + 100);
    await expect(openStore(createTestCommon(), { path })).rejects.toMatchObject({ code: "KW_STORE_CORRUPT", message: expect.stringMatching(/drop the \d+ commits written after the damage/) });
  });

  it("opens a log cut inside its last commit (a torn tail, not damage) as the commit before it", async () => {
    const path = await crashedStore(temp.dir, "store.db", { windows: 5 });
    // Cut in the middle of the last frame.
    truncateSync(`${path}-wal`, statSync(`${path}-wal`).size - 1000);
    rmSync(`${path}-shm`);
    const store = await openStore(createTestCommon(), { path });
    try {
      expect((await store.getCursor("s1"))?.block).toBe(40);
    } finally {
      await store.close();
    }
  });
});
