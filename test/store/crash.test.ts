import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import BetterSqlite3 from "better-sqlite3";
import { seedStore } from "../../bench/store-seed.js";
import { createPrng } from "../../src/simulator/prng.js";
import { faultMoment } from "../helpers/wait-for.js";
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

/** Rounds of commits a writer killed while committing has acknowledged first: the runs make progress however slow the machine. */
const ACKED_ROUNDS_BEFORE_KILL = 1;

/**
 * Starts the writer, kills it with SIGKILL at a random moment — during start-up when asked,
 * else while it commits, once it has acknowledged ACKED_ROUNDS_BEFORE_KILL rounds — and
 * returns the last block it acknowledged per source.
 */
async function runAndKill(path: string, phase: "start-up" | "commits", random: () => number): Promise<{ acked: Map<string, number>; killedWhileRunning: boolean }> {
  const child = spawn(process.execPath, ["--import", "tsx", WRITER, path], { stdio: ["ignore", "pipe", "inherit"] });
  const acked = new Map<string, number>();
  let stdout = "";
  let ackedRounds = 0;
  let committing!: () => void;
  const isCommitting = new Promise<void>((resolve) => (committing = resolve));
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    const lines = stdout.split("\n");
    stdout = lines.pop() ?? "";
    for (const line of lines) {
      const [word, key, block] = line.split(" ");
      if (word === "ack" && key !== undefined) acked.set(key, Number(block));
      if (word === "ack" && key === KEYS[0] && ++ackedRounds === ACKED_ROUNDS_BEFORE_KILL) committing();
    }
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => (code !== null && code !== 0 ? reject(new Error(`writer exited with ${code}`)) : resolve(signal)));
  });
  if (phase === "commits") await Promise.race([isCommitting, exited]);
  await faultMoment(random() * (phase === "start-up" ? 600 : 150));
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
  let killsAmongCommits = 0;
  // Seeded, so that a failure can be replayed with the same kill moments.
  const seed = Date.now() % 100_000;
  const prng = createPrng(seed);
  for (let round = 0; round < KILLS * 2 && kills < KILLS; round++) {
    // One kill in five lands in start-up, the rest among commits.
    const phase = round % 5 === 4 ? "start-up" : "commits";
    const { acked, killedWhileRunning } = await runAndKill(path, phase, () => prng.next());
    if (killedWhileRunning) kills++;
    if (killedWhileRunning && phase === "commits") killsAmongCommits++;
    const cursors = check(path);
    for (const key of KEYS) {
      const now = cursors.get(key) ?? -1;
      // Cursors only move forward, and whatever the writer was told is durable is there.
      expect(now, `seed ${seed}`).toBeGreaterThanOrEqual(previous.get(key) ?? -1);
      expect(now, `seed ${seed}`).toBeGreaterThanOrEqual(acked.get(key) ?? -1);
    }
    previous = cursors;
  }
  expect(kills).toBe(KILLS);
  // The writers made real progress (each one killed among commits had one acknowledged first),
  // so the kills did land among writes.
  // The blocks committed per source: its cursor + 1 (the first block is 0).
  const committed = Math.min(...KEYS.map((key) => (previous.get(key) ?? -1) + 1));
  expect(committed).toBeGreaterThanOrEqual(killsAmongCommits * ACKED_ROUNDS_BEFORE_KILL);
  expect(killsAmongCommits).toBeGreaterThan(KILLS / 2);
  // The last writer's lock was stale; a new process takes it over and reads the same state.
  const store = await openStore(createTestCommon(), { path });
  expect((await store.getCursor("k0"))?.block).toBe(previous.get("k0"));
  await store.close();
}, 120_000);
