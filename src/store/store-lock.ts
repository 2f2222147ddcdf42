import { accessSync, constants, readFileSync } from "node:fs";
import { readFile, rename, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import BetterSqlite3, { type Database } from "better-sqlite3";
import type { Logger } from "../common/logger.js";
import { StoreError } from "./errors.js";
import { fileNotWritable, notWritable } from "./store-folder.js";

/** What the lock file holds: enough for a user to find the holder. */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** When the holding process started (ISO-8601 UTC). */
  started_at: string;
}

export interface StoreLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** Removes the lock file if it is still ours and lets the kernel lock go. Safe to call twice. */
  release(): Promise<void>;
}

/** Lock files of this process: only for the message of a second open in the same process. */
const heldHere = new Set<string>();

/**
 * Takes the store's lock, so that a second process cannot write the same store.
 *
 * The lock itself is one the kernel holds for the process: a POSIX (fcntl) write lock on
 * `<store>.lock.db`, taken through SQLite (Node has no flock or fcntl of its own): a
 * connection in exclusive locking mode that keeps a write transaction open. The kernel drops
 * it when the process dies, however it dies, and no two processes hold it at once, whatever
 * their pids and host names: two containers that share a volume and a host name are both
 * PID 1, and no arithmetic on pids can tell them apart. The file stays (removing a lock file
 * that another process may have opened lets two processes lock two different files); it is
 * empty, and the journal is kept in memory, so nothing else appears beside it.
 *
 * `<store>.lock` (JSON: pid, host name, start time) is only a message: it names the holder in
 * the refusal of the next process. One written by a process that no longer holds the kernel
 * lock is stale and replaced. One naming another host is still respected: a store on a
 * network filesystem may be shared by hosts whose locks do not reach each other.
 */
export async function acquireStoreLock(storePath: string, logger: Logger): Promise<StoreLock> {
  const path = `${storePath}.lock`;
  const kernelPath = `${storePath}.lock.db`;
  const owner: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    started_at: new Date(Date.now() - process.uptime() * 1000).toISOString(),
  };
  const kernel = await takeKernelLock(kernelPath, storePath, async () => {
    if (heldHere.has(path)) return "already open in this process";
    const holder = await readOwner(path);
    if (typeof holder !== "object") return `in use by another process (it holds the lock on ${kernelPath}; ${path} does not name it)`;
    if (holder.hostname !== owner.hostname) return `in use by process ${holder.pid} on host ${holder.hostname} (started ${holder.started_at})`;
    // Two containers sharing a volume and a host name: both are often PID 1.
    if (holder.pid === owner.pid) return `in use by another process with this same pid ${holder.pid} (started ${holder.started_at}): another container or PID namespace on this store`;
    return `in use by process ${holder.pid} (started ${holder.started_at})`;
  });
  try {
    const holder = await readOwner(path);
    if (holder === "unreadable") {
      throw new StoreError("KW_STORE_LOCKED", `the store lock ${path} exists but is not a kaiawatch lock file; if no kaiawatch process uses this store, remove it`);
    }
    if (typeof holder === "object") {
      if (holder.hostname !== owner.hostname) {
        // The kernel lock may not reach across hosts (a network filesystem): assume it is alive.
        throw new StoreError(
          "KW_STORE_LOCKED",
          `the store ${storePath} is in use by process ${holder.pid} on host ${holder.hostname} (started ${holder.started_at}); stop it first, or remove ${path} if that host no longer runs kaiawatch on this store`,
        );
      }
      logger.warn({ lock: path, pid: holder.pid, hostname: holder.hostname, started_at: holder.started_at }, "taking over a stale store lock: its process is gone");
    }
    // Written completely under a private name, then renamed into place: a reader never sees half of it.
    const privatePath = `${path}.${process.pid}`;
    try {
      await writeFile(privatePath, `${JSON.stringify(owner)}\n`);
      await rename(privatePath, path);
    } catch (error) {
      await unlink(privatePath).catch(() => undefined);
      throw notWritable(dirname(path), error, "write");
    }
  } catch (error) {
    kernel.close();
    throw error;
  }

  heldHere.add(path);
  let released = false;
  return {
    path,
    owner,
    async release() {
      if (released) return;
      released = true;
      heldHere.delete(path);
      try {
        // While the kernel lock is still held: no other process can have written it meanwhile.
        const holder = await readOwner(path).catch(() => "gone" as const);
        if (typeof holder === "object" && holder.pid === owner.pid && holder.hostname === owner.hostname && holder.started_at === owner.started_at) {
          await unlink(path).catch(() => undefined);
        }
      } finally {
        kernel.close();
      }
    },
  };
}

/**
 * The kernel's lock on `path`, or KW_STORE_LOCKED naming the holder (`holderText`). Taken
 * without waiting (timeout 0): a held lock is a refusal, not a queue.
 */
async function takeKernelLock(path: string, storePath: string, holderText: () => Promise<string>): Promise<Database> {
  let db: Database | undefined;
  try {
    // SQLite falls back to reading a file it may not write (one left by another user), and such
    // a connection takes no write lock the kernel holds: a second process would get in too.
    refuseUnwritable(path);
    db = new BetterSqlite3(path, { timeout: 0 });
    // No journal file beside it, and the lock is kept after any statement: exclusive mode.
    db.pragma("journal_mode = MEMORY");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof StoreError) throw error;
    const code = (error as { code?: unknown }).code;
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
      throw new StoreError(
        "KW_STORE_LOCKED",
        `the store ${storePath} is ${await holderText()}; stop it first (commands that change the store ask a running daemon through its status API)`,
      );
    }
    // Not a lock held by anyone: the file cannot be opened for writing (a permission, most often).
    if (code === "SQLITE_CANTOPEN" || code === "SQLITE_READONLY" || code === "SQLITE_PERM") throw fileNotWritable(path, error);
    throw new StoreError("KW_STORE_LOCKED", `cannot take the store lock ${path}: ${(error as Error).message}${typeof code === "string" ? ` (${code})` : ""}`, { cause: error });
  }
}

function refuseUnwritable(path: string): void {
  try {
    accessSync(path, constants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw fileNotWritable(path, error);
  }
}

async function readOwner(path: string): Promise<LockOwner | "gone" | "unreadable"> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw new StoreError("KW_STORE_LOCKED", `cannot read the store lock ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (typeof value.pid === "number" && Number.isInteger(value.pid) && value.pid > 0 && typeof value.hostname === "string" && typeof value.started_at === "string") {
      return { pid: value.pid, hostname: value.hostname, started_at: value.started_at };
    }
  } catch {
    // fall through
  }
  return "unreadable";
}

/**
 * The state letter of /proc/<pid>/stat (R, S, D, Z, X, …), or undefined where /proc is not
 * there (macOS) or the process is gone. The command name in parentheses may hold spaces and
 * parentheses itself, so the state is read after the last ")".
 */
export function processState(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const after = stat.slice(stat.lastIndexOf(")") + 1).trim();
  return after.split(" ")[0] || undefined;
}
