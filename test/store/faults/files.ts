// Stores as a crash leaves them, and what tests compare of their files.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestCommon } from "../../../src/common/common.js";
import { openStore } from "../../../src/store/open-store.js";
import { cursor, entry } from "../fixtures/sample.js";

export const STORE_FILES = ["", "-wal", "-shm"] as const;

/**
 * A store as `kill -9` leaves it: `windows` commits in its WAL (none checkpointed), copied
 * with its -shm while the writer still had it open. Returns the copy's path (`name` in `dir`).
 */
export async function crashedStore(dir: string, name: string, options: { windows?: number; padding?: number } = {}): Promise<string> {
  const live = join(dir, `${name}.live`);
  const store = await openStore(createTestCommon(), { path: live });
  for (let i = 1; i <= (options.windows ?? 20); i++) {
    await store.commitWindow({ cursor: cursor("s1", i * 10), entries: [entry(`${name}-a${i}`, "slack", { padding: options.padding ?? 2_000 })] });
  }
  const path = join(dir, name);
  for (const suffix of STORE_FILES) copyFileSync(`${live}${suffix}`, `${path}${suffix}`);
  await store.close();
  return path;
}

/** A store closed cleanly (everything checkpointed into the database, no WAL) with `entries` entries. */
export async function closedStore(path: string, entries: number, padding = 2_000): Promise<void> {
  const store = await openStore(createTestCommon(), { path });
  for (let i = 1; i <= entries; i += 50) {
    const batch = Array.from({ length: Math.min(50, entries - i + 1) }, (_, k) => entry(`a${i + k}`, "slack", { padding }));
    await store.commitWindow({ cursor: cursor("s1", i), entries: batch });
  }
  await store.close();
}

/** sha256 of the database, its -wal and its -shm ("absent" for a missing one). */
export function hashes(path: string): Record<string, string> {
  return Object.fromEntries(
    STORE_FILES.map((suffix) => [suffix || "db", existsSync(`${path}${suffix}`) ? createHash("sha256").update(readFileSync(`${path}${suffix}`)).digest("hex") : "absent"]),
  );
}
