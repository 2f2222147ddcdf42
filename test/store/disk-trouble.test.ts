import { execFileSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import type { StoreData } from "../../src/store/types.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { waitFor } from "../helpers/child.js";
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
const canMount = (() => {
  const dir = tempDir("kaiawatch-tmpfs-probe-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir.path], { stdio: "ignore" });
    execFileSync("umount", [dir.path], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    dir.remove();
  }
})();

/** Appends to `path` until the file system holding it is full (ENOSPC). */
function fill(path: string): void {
  const fd = openSync(path, "a");
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries `action` while it fails with one of `codes` (a store write in flight at that moment). */
async function retrying(action: () => void, codes: string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return action();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? ((error as { status?: number }).status === 32 ? "EBUSY" : undefined);
      if (attempt > 200 || !codes.includes(code ?? "")) throw error;
      await sleep(10);
    }
  }
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

const troubles: Trouble[] = [
  {
    name: "a write that fails (EISDIR at the temporary file)",
    errno: "EISDIR",
    skip: false,
    storeDir: () => {
      const d = tempDir("kaiawatch-disk-");
      cleanups.push(() => d.remove());
      return d.path;
    },
    // A write in flight holds the temporary file for a moment: EEXIST until it is renamed.
    break: (storePath: string) => retrying(() => mkdirSync(`${storePath}.tmp`), ["EEXIST"]),
    fix: (storePath: string) => rmSync(`${storePath}.tmp`, { recursive: true }),
  },
  (() => {
    let filler = "";
    return {
      name: "a full disk (ENOSPC on a tiny tmpfs)",
      errno: "ENOSPC",
      skip: !canMount,
      storeDir: () => mountTmpfs("4m") as string,
      break: async (storePath: string) => {
        filler = join(storePath, "..", "filler");
        // A write in flight when the disk fills up still renames over the old file and frees
        // its pages: top up until nothing is freed any more.
        for (let i = 0; i < 3; i++) {
          fill(filler);
          await sleep(300);
        }
        fill(filler);
      },
      fix: () => rmSync(filler),
    };
  })(),
  (() => {
    let mounted = "";
    return {
      name: "a directory that turns read-only (EROFS: tmpfs remounted read-only)",
      errno: "EROFS",
      skip: !canMount,
      storeDir: () => (mounted = mountTmpfs("4m") as string),
      // A write in flight holds a file open for writing: the remount is refused (EBUSY) until it closes.
      break: () => retrying(() => execFileSync("mount", ["-o", "remount,ro", mounted], { stdio: "ignore" }), ["EBUSY"]),
      fix: () => execFileSync("mount", ["-o", "remount,rw", mounted]),
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

/** The cursors as the file on disk holds them (what a restart would start from). */
function fileCursors(storePath: string): Record<string, number> {
  const data = JSON.parse(readFileSync(storePath, "utf8")) as StoreData;
  return Object.fromEntries(Object.values(data.cursors).map((c) => [c.key, c.block]));
}

type Readyz = { status: number; body: { ready: boolean; reasons: string[] } };
async function readyz(url: string): Promise<Readyz> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as Readyz["body"] };
}

async function readyzUntil(url: string, status: number): Promise<Readyz> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await readyz(url);
    if (answer.status === status) return answer;
    if (Date.now() > deadline) throw new Error(`/readyz still answers ${answer.status}: ${answer.body.reasons.join("; ")}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const pendingAlerts = (daemon: Daemon) => daemon.store.listOutbox({ state: "pending" }).length;

describe("disk trouble under a running daemon", () => {
  // Where mount is not allowed (no root, no CAP_SYS_ADMIN) the tmpfs cases show as skipped; EISDIR always runs.
  it.each(troubles.map((trouble) => ({ ...trouble, title: trouble.skip ? `${trouble.name} [skipped: cannot mount a tmpfs here]` : trouble.name })))("$title: keeps the last good file, stops, says so, and goes on without a loss when it is gone", async (trouble) => {
    if (trouble.skip) return;
    const run = await startDaemon(trouble.storeDir());
    const { sim, daemon, url, storePath } = run;
    const keys = daemon.plan.sources.map((s) => s.key);
    const atHead = () => existsSync(storePath) && keys.every((key) => fileCursors(storePath)[key] === sim.head());
    await waitFor(atHead, 20_000, "every cursor on disk to reach the head");
    await waitFor(() => pendingAlerts(daemon) === 0, 20_000, "the first alerts to be delivered");

    await trouble.break(storePath);
    let broken = true;
    // A failed assertion must not leave the disk broken under the daemon's stop.
    cleanups.push(() => {
      if (broken) trouble.fix(storePath);
    });
    const good = readFileSync(storePath);
    const goodCursors = fileCursors(storePath);
    sim.mine(5 * WINDOW);

    // Not ready, with the store named as the reason; the log says why, with the errno.
    const ready = await readyzUntil(url, 503);
    expect(ready.body.ready).toBe(false);
    expect(ready.body.reasons.join("\n")).toMatch(/^store: the last write of .* failed/m);
    await waitFor(() => run.logs.some((line) => line.includes("store write failed") && line.includes(trouble.errno)), 10_000, `a log line naming ${trouble.errno}`);

    // Several ticks later: the last good file untouched, and the cursors no further than the
    // one window that was already in memory when its write failed.
    await sleep(3_000);
    expect(readFileSync(storePath).equals(good)).toBe(true);
    for (const key of keys) expect(daemon.store.getCursor(key)!.block, key).toBeLessThanOrEqual(goodCursors[key]! + WINDOW);
    const logged = run.logs.map((line) => JSON.parse(line) as { msg: string; err?: { code?: string; message?: string } }).filter((line) => line.msg.startsWith("store write failed"));
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) {
      expect(line.err?.code).toBe("KW_STORE_WRITE_FAILED");
      expect(line.err?.message).toContain(storePath);
    }

    trouble.fix(storePath);
    broken = false;
    await waitFor(atHead, 30_000, "the cursors on disk to reach the head once the disk is fine");
    await waitFor(() => pendingAlerts(daemon) === 0, 20_000, "every alert to be delivered");
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
