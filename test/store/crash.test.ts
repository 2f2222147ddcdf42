import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import BetterSqlite3 from "better-sqlite3";
import { seedStore } from "../../bench/store-seed.js";
import { makeTempDir } from "./fixtures/temp-dir.js";

const WRITER = new URL("./fixtures/writer.ts", import.meta.url).pathname;
const KEYS = ["k0", "k1", "k2"];
// Twelve kills land in every phase of a commit many times over (the writer commits
// continuously); `npm run torture` runs the long version.
const KILLS = 12;
/** Delivered alerts in the store before the first writer: the kills land on commits into a full store. */
const SEEDED = 100_000;

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

/**
 * Starts the writer, kills it with SIGKILL at a random moment (sometimes during start-up,
 * mostly while it commits), and returns the last block it acknowledged per source.
 */
async function runAndKill(path: string): Promise<{ acked: Map<string, number>; killedWhileRunning: boolean }> {
  const child = spawn(process.execPath, ["--import", "tsx", WRITER, path], { stdio: ["ignore", "pipe", "inherit"] });
  const acked = new Map<string, number>();
  let stdout = "";
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    const lines = stdout.split("\n");
    stdout = lines.pop() ?? "";
    for (const line of lines) {
      if (line === "ready") ready();
      const [word, key, block] = line.split(" ");
      if (word === "ack" && key !== undefined) acked.set(key, Number(block));
    }
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => (code !== null && code !== 0 ? reject(new Error(`writer exited with ${code}`)) : resolve(signal)));
  });
  if (Math.random() < 0.2) {
    await sleep(Math.random() * 600);
  } else {
    await Promise.race([isReady, exited]);
    await sleep(Math.random() * 150);
  }
  child.kill("SIGKILL");
  const signal = await exited;
  return { acked, killedWhileRunning: signal === "SIGKILL" };
}

/** Reads the file as a fresh process would, checking it is whole and consistent. */
function check(path: string): Map<string, number> {
  if (!existsSync(path)) return new Map(); // killed before the store was created
  // A damaged database would throw here. The writer's entries only: the seeded history is counted.
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  const data = {
    cursors: Object.fromEntries((db.prepare("SELECT key, block FROM cursors").all() as Array<{ key: string; block: number }>).map((c) => [c.key, c])),
    outbox: db.prepare("SELECT id FROM outbox WHERE sink IN ('a', 'b')").all() as Array<{ id: string }>,
    seeded: (db.prepare("SELECT count(*) AS n FROM outbox WHERE sink = 'history' AND state = 'delivered'").get() as { n: number }).n,
  };
  db.close();
  expect(data.seeded).toBe(SEEDED);
  const ids = new Set(data.outbox.map((e) => e.id));
  expect(ids.size).toBe(data.outbox.length);
  const cursors = new Map<string, number>();
  for (const key of KEYS) {
    const block = data.cursors[key]?.block ?? -1;
    cursors.set(key, block);
    // Every window up to the cursor has both its entries; none past it has any.
    for (let b = 0; b <= block + 1; b++) {
      for (const sink of ["a", "b"]) expect(ids.has(`${key}-${b}:${sink}`), `${key}-${b}:${sink} with cursor ${block}`).toBe(b <= block);
    }
  }
  return cursors;
}

it(`keeps the store whole and consistent across ${KILLS} kill -9 of a writing process, on a store holding ${SEEDED.toLocaleString("en-US")} delivered alerts`, async () => {
  const path = join(temp.dir, "kaiawatch.json");
  await seedStore(path, { delivered: SEEDED, sinks: ["history"] });
  let previous = new Map<string, number>();
  let kills = 0;
  for (let round = 0; round < KILLS * 2 && kills < KILLS; round++) {
    const { acked, killedWhileRunning } = await runAndKill(path);
    if (killedWhileRunning) kills++;
    const cursors = check(path);
    for (const key of KEYS) {
      const now = cursors.get(key) ?? -1;
      // Cursors only move forward, and whatever the writer was told is durable is there.
      expect(now).toBeGreaterThanOrEqual(previous.get(key) ?? -1);
      expect(now).toBeGreaterThanOrEqual(acked.get(key) ?? -1);
    }
    previous = cursors;
  }
  expect(kills).toBe(KILLS);
  // The writers made real progress, so the kills did land among writes.
  expect(Math.min(...KEYS.map((key) => previous.get(key) ?? -1))).toBeGreaterThan(KILLS);
  // The last writer's lock was stale; a new process takes it over and reads the same state.
  const store = await openStore(createTestCommon(), { path });
  expect((await store.getCursor("k0"))?.block).toBe(previous.get("k0"));
  await store.close();
}, 120_000);
