import { existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/types.js";
import { cursor, entry } from "./fixtures/sample.js";
import { makeTempDir } from "./fixtures/temp-dir.js";

/**
 * A torn write: the machine stops in the middle of appending a commit to the WAL. SQLite
 * writes each commit as frames (a 24-byte header and one page each) whose checksums chain
 * from the WAL header, and marks the last frame of a commit; at the next open it replays
 * frames up to the last valid commit mark. Cut inside the last commit, the store must open
 * as exactly the commit before it, never as garbage or empty; whole, as the last commit.
 *
 * The cuts: every byte of every frame header, the first and last bytes of every page, every
 * 13th byte of the commit's last frame (the one carrying the commit mark) and every 97th
 * byte in between. Every single offset of all ~10 frames (41,000 opens) took minutes, and
 * every byte of the last frame alone (4,120 opens, each checking the files) a minute of
 * the suite; a cut inside a page's middle is handled by the same rule as one near its ends
 * (the partial frame is not read), which the sampled offsets show.
 */
let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

interface Snapshot {
  cursors: Array<[string, number]>;
  outbox: Array<[string, string, number]>;
  meta: unknown;
}

async function snapshot(store: Store): Promise<Snapshot> {
  return {
    cursors: (await store.listCursors())
      .map((c): [string, number] => [c.key, c.block])
      .sort((a, b) => a[0].localeCompare(b[0])),
    outbox: (await store.listOutbox()).map((e): [string, string, number] => [e.id, e.state, e.attempts]),
    meta: await store.getMeta("m"),
  };
}

/** The byte offsets at which each commit of the WAL ends (frame headers carry the database size on a commit's last frame). */
function commitEnds(wal: Buffer): number[] {
  const pageSize = wal.readUInt32BE(8);
  const frame = 24 + pageSize;
  const ends: number[] = [];
  for (let at = 32; at + frame <= wal.length; at += frame) if (wal.readUInt32BE(at + 4) !== 0) ends.push(at + frame);
  return ends;
}

describe("a WAL cut at every byte of its last commit", () => {
  it("opens as the commit before it, and whole as the last commit; a writer goes on from there", async () => {
    const path = join(temp.dir, "kaiawatch.db");
    const common = createTestCommon();
    const store = await openStore(common, { path });
    const states: Snapshot[] = [];
    for (let i = 1; i <= 6; i++) {
      await store.commitWindow({ cursor: cursor("s1", i * 10), entries: [entry(`a${i}`, "slack", { padding: 300 }), entry(`a${i}`, "mail")] });
      await store.updateOutbox([{ id: `a${i}:mail`, kind: "delivered", at: "2025-01-01T00:01:00.000Z" }]);
      await store.setMeta("m", { i });
      states.push(await snapshot(store));
    }
    // The last commit: a window with an entry and a quiet source's advance.
    await store.commitWindow({ cursor: cursor("s2", 5), entries: [] });
    await store.commitWindow({ cursor: cursor("s1", 70), entries: [entry("a7", "slack")] });
    const last = await snapshot(store);
    const beforeLast = states.at(-1)!;

    // The store stays open: closing would checkpoint the WAL into the database and remove it.
    const wal = readFileSync(`${path}-wal`);
    const db = readFileSync(path);
    const ends = commitEnds(wal);
    expect(ends.length).toBeGreaterThanOrEqual(18); // no checkpoint ran: every commit is in the WAL
    expect(ends.at(-1)).toBe(wal.length);
    const start = ends.at(-2)!; // where the last commit's frames begin
    await store.close();

    const copy = join(temp.dir, "copy.db");
    writeFileSync(copy, db);
    writeFileSync(`${copy}-wal`, wal);
    const openCopy = async (): Promise<Snapshot> => {
      rmSync(`${copy}-shm`, { force: true });
      const reader = await openStore(common, { path: copy, readOnly: true });
      try {
        return await snapshot(reader);
      } finally {
        await reader.close();
      }
    };
    expect(await openCopy()).toEqual(last);
    const pageSize = wal.readUInt32BE(8);
    const frame = 24 + pageSize;
    const cuts = new Set<number>();
    for (let cut = wal.length - frame; cut < wal.length; cut += 13) cuts.add(cut);
    for (let at = start; at < wal.length; at += frame) {
      for (let i = 0; i <= 32; i++) cuts.add(at + i);
      for (let i = 1; i <= 8; i++) cuts.add(at + frame - i);
    }
    for (let cut = start; cut < wal.length; cut += 97) cuts.add(cut);
    // From the longest cut to the shortest: each is a truncation of the one before.
    let checked = 0;
    for (const cut of [...cuts].filter((c) => c >= start && c < wal.length).sort((a, b) => b - a)) {
      truncateSync(`${copy}-wal`, cut);
      const seen = await openCopy();
      if (JSON.stringify(seen) !== JSON.stringify(beforeLast)) expect(seen, `WAL cut at byte ${cut} of ${wal.length}`).toEqual(beforeLast);
      checked++;
    }
    expect(checked).toBeGreaterThan(frame / 13);
    expect(statSync(`${copy}-wal`).size).toBe(start); // the readers never wrote to the WAL

    // A writer opening a torn WAL recovers the same state and commits after it.
    for (const cut of [start + 1, start + 24, start + 24 + 4096, wal.length - 1]) {
      const writable = join(temp.dir, `writable-${cut}.db`);
      writeFileSync(writable, db);
      writeFileSync(`${writable}-wal`, wal.subarray(0, cut));
      const writer = await openStore(common, { path: writable });
      expect(await snapshot(writer)).toEqual(beforeLast);
      await writer.commitWindow({ cursor: cursor("s1", 80), entries: [entry("a8", "slack")] });
      await writer.close();
      expect(existsSync(`${writable}-wal`)).toBe(false); // the writer checkpointed the WAL at close
      const again = await openStore(common, { path: writable, readOnly: true });
      expect((await again.getCursor("s1"))?.block).toBe(80);
      expect((await again.listOutbox()).map((e) => e.id)).toEqual([...beforeLast.outbox.map(([id]) => id), "a8:slack"]);
      await again.close();
    }
  }, 120_000);
});

describe("a damaged database file", () => {
  // SQLite keeps no checksum of a page's content in the database file (only the WAL's
  // frames have one): a flipped byte inside an alert's text is not seen by any check. What
  // quick_check finds is damage to the structure: here a b-tree page's type byte.
  it("is reported as KW_STORE_CORRUPT by the checks at open when a page's structure is damaged, and left as it is", async () => {
    const path = join(temp.dir, "kaiawatch.db");
    const store = await openStore(createTestCommon(), { path });
    for (let i = 0; i < 200; i++) await store.enqueue([entry(`a${i}`, "slack", { padding: 500 })]);
    await store.close();
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    // The first byte of a page in the middle of the file: its b-tree page type.
    const at = pageSize * Math.floor(bytes.length / pageSize / 2);
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(path, bytes);
    const error = await openStore(createTestCommon(), { path, fullCheck: true }).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error?.code).toBe("KW_STORE_CORRUPT");
    // The page check of store-files.ts sees the page first; SQLite's quick_check would too.
    expect(error?.message).toMatch(/SQLite's check found damage|is neither a b-tree page/);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });
});
