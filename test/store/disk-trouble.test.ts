import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { faultMoment, observeFor, waitFor } from "../helpers/wait-for.js";
import { readOnDisk } from "./fixtures/on-disk.js";
import { CAN_MOUNT_TMPFS, fillFileSystem } from "../helpers/tmpfs.js";
import { configFromText, quietCommon, readJsonLines, recordKeyOf, tempDir } from "../helpers/harness.js";

/**
 * Disk trouble under a running daemon (in-process, status server on a free port, the
 * simulator as the explorer): a write that fails (a directory where the temporary file must
 * go: EISDIR, which stops root too), a full disk (ENOSPC on a tiny tmpfs) and a directory
 * that turns read-only (EROFS: the tmpfs remounted read-only; chmod would not stop root).
 * While it lasts the daemon keeps the last good file byte for byte, stops moving its cursors,
 * says so on /readyz (503, with the reason) and in its log; once the cause is gone it goes on
 * by itself, and every record of every block is delivered: nothing lost, nothing invented.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  // Every cleanup runs even when one fails: a mount must never outlive the test.
  const errors: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve().then(cleanup).catch((error: unknown) => errors.push(error));
  if (errors.length > 0) throw errors[0];
});

const WINDOW = 4;

/** A tmpfs of `size` at a fresh directory, or undefined where mounting is not allowed (no root, a container without CAP_SYS_ADMIN). */
function mountTmpfs(size: string): string | undefined {
  const dir = tempDir("kaiawatch-tmpfs-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir.path], { stdio: "ignore" });
  } catch {
    dir.remove();
    return undefined;
  }
  cleanups.push(() => {
    try {
      execFileSync("umount", [dir.path], { stdio: "ignore" });
    } catch {
      // Already unmounted.
    }
    dir.remove();
  });
  return dir.path;
}



interface Trouble {
  name: string;
  /** The errno the store's log line must name. */
  errno: string;
  skip: boolean;
  /** The directory for the store (on the troubled file system). */
  storeDir(): string;
  /** Resolves once no write can succeed any more. */
  break(storePath: string): Promise<void>;
  fix(storePath: string): void;
}

/**
 * The JSON store had two more cases, a directory at its temporary file (EISDIR) and a
 * read-only remount (EROFS). SQLite writes no temporary file, and keeps its files open for
 * writing, so the kernel refuses a read-only remount (EBUSY) while the daemon runs: a full
 * disk is the trouble that reaches it. failures.test.ts covers a failed write in-process.
 */
const troubles: Trouble[] = [
  (() => {
    let filler = "";
    return {
      name: "a full disk (ENOSPC on a tiny tmpfs)",
      errno: "SQLITE_FULL",
      skip: !CAN_MOUNT_TMPFS,
      storeDir: () => mountTmpfs("4m") as string,
      break: async (storePath: string) => {
        filler = join(storePath, "..", "filler");
        // A checkpoint may still free or reuse pages of the WAL: top up until nothing is freed any more.
        for (let i = 0; i < 3; i++) {
          fillFileSystem(filler);
          await faultMoment(300);
        }
        fillFileSystem(filler);
      },
      fix: () => rmSync(filler),
    };
  })(),
];

interface Running {
  sim: Simulator;
  daemon: Daemon;
  url: string;
  storePath: string;
  alertsPath: string;
  start: number;
  logs: string[];
}

async function startDaemon(storeDir: string): Promise<Running> {
  const sim = await createSimulator({ seed: 5, initialBlocks: 30, density: { eventLogs: 3, nftTransfers: 2, internalTransactions: 3 } });
  cleanups.push(() => sim.close());
  const out = tempDir("kaiawatch-disk-out-");
  cleanups.push(() => out.remove());
  const storePath = join(storeDir, "store.json");
  const alertsPath = join(out.path, "alerts.jsonl");
  const start = sim.head() - 12;
  const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 1 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${storePath} }
status: { listen: "127.0.0.1:0" }
defaults: { schedule: "* * * * * *", start: ${start}, max_window_blocks: ${WINDOW}, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [nft_transfers, internal_transactions] }
rules:
  - { name: token-logs, watch: token, notify: [out] }
  - { name: wallet-nfts, watch: wallet, source: nft_transfers, notify: [out] }
  - { name: wallet-calls, watch: wallet, source: internal_transactions, notify: [out] }
sinks:
  out: { type: file, path: ${alertsPath} }
`);
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs.push(...chunk.toString().split("\n").filter(Boolean));
      callback();
    },
  });
  const daemon = await createDaemon(quietCommon({ logger: createLogger({ level: "info", redactor: createSecretRedactor(), destination }) }), { config });
  cleanups.push(() => daemon.stop());
  await daemon.start();
  return { sim, daemon, url: daemon.statusUrl()!, storePath, alertsPath, start, logs };
}

/** The cursors as the store on disk holds them (what a restart would start from). */
function fileCursors(storePath: string): Record<string, number> {
  const data = readOnDisk(storePath);
  return Object.fromEntries(Object.values(data.cursors).map((c) => [c.key, c.block]));
}

type Readyz = { status: number; body: { ready: boolean; reasons: string[] } };
async function readyz(url: string): Promise<Readyz> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as Readyz["body"] };
}

async function readyzUntil(url: string, status: number): Promise<Readyz> {
  let answer: Readyz | undefined;
  await waitFor(async () => (answer = await readyz(url)).status === status, 20_000, `/readyz to answer ${status}`).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; it answers ${answer?.status}: ${answer?.body.reasons.join("; ")}`);
  });
  return answer!;
}

const pendingAlerts = async (daemon: Daemon) => (await daemon.store.listOutbox({ state: "pending" })).length;

describe("disk trouble under a running daemon", () => {
  // Where mount is not allowed (no root, no CAP_SYS_ADMIN) the case shows as skipped.
  it.each(troubles.map((trouble) => ({ ...trouble, title: trouble.skip ? `${trouble.name} [skipped: cannot mount a tmpfs here]` : trouble.name })))("$title: keeps the last good file, stops, says so, and goes on without a loss when it is gone", async (trouble) => {
    if (trouble.skip) return;
    const run = await startDaemon(trouble.storeDir());
    const { sim, daemon, url, storePath } = run;
    const keys = daemon.plan.sources.map((s) => s.key);
    const atHead = () => existsSync(storePath) && keys.every((key) => fileCursors(storePath)[key] === sim.head());
    await waitFor(atHead, 20_000, "every cursor on disk to reach the head");
    await waitFor(async () => (await pendingAlerts(daemon)) === 0, 20_000, "the first alerts to be delivered");

    await trouble.break(storePath);
    let broken = true;
    // A failed assertion must not leave the disk broken under the daemon's stop.
    cleanups.push(() => {
      if (broken) trouble.fix(storePath);
    });
    const good = readOnDisk(storePath);
    const goodCursors = fileCursors(storePath);
    sim.mine(5 * WINDOW);

    // Not ready, with the store named as the reason; the log says why, with the errno.
    const ready = await readyzUntil(url, 503);
    expect(ready.body.ready).toBe(false);
    expect(ready.body.reasons.join("\n")).toMatch(/^store: the last write of .* failed/m);
    await waitFor(() => run.logs.some((line) => line.includes("store write failed") && line.includes(trouble.errno)), 10_000, `a log line naming ${trouble.errno}`);

    // Several ticks later: the last commit untouched, and the cursors where it left them (a
    // failed write is undone in memory too: the poller scans those windows again).
    await observeFor(3_000);
    expect(readOnDisk(storePath)).toEqual(good);
    for (const key of keys) expect((await daemon.store.getCursor(key))!.block, key).toBeLessThanOrEqual(goodCursors[key]!);
    const logged = run.logs.map((line) => JSON.parse(line) as { msg: string; err?: { code?: string; message?: string } }).filter((line) => line.msg.startsWith("store write failed"));
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) {
      expect(line.err?.code).toBe("KW_STORE_WRITE_FAILED");
      expect(line.err?.message).toContain(storePath);
    }

    trouble.fix(storePath);
    broken = false;
    await waitFor(atHead, 30_000, "the cursors on disk to reach the head once the disk is fine");
    await waitFor(async () => (await pendingAlerts(daemon)) === 0, 20_000, "every alert to be delivered");
    await readyzUntil(url, 200);
    await daemon.stop();

    // Against the simulator's truth: every record of every block, each once, nothing else.
    const head = sim.head();
    const { busyToken, busyWallet } = sim.addresses;
    const range = { from: run.start, to: head }; // `start` is the first block scanned
    const truth = [
      ...sim.truth.accountEventLogs(busyToken, range).map((r) => `token-logs|${NORMALIZERS.event_logs(r).key}`),
      ...sim.truth.accountNftTransfers(busyWallet, range).map((r) => `wallet-nfts|${NORMALIZERS.nft_transfers(r).key}`),
      ...sim.truth.accountInternalTransactions(busyWallet, range).map((r) => `wallet-calls|${NORMALIZERS.internal_transactions(r).key}`),
    ].sort();
    expect(truth.length).toBeGreaterThan(20);
    const delivered = [...new Set(readJsonLines(run.alertsPath).map((alert) => `${alert.rule}|${recordKeyOf(alert)}`))].sort();
    expect(delivered).toEqual(truth);
  }, 60_000);
});
