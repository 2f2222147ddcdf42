import { readFileSync } from "node:fs";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import type { Logger } from "../common/logger.js";
import { StoreError } from "./errors.js";

/** What a lock file holds: enough for a user (and the next process) to find the holder. */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** When the holding process started (ISO-8601 UTC). */
  started_at: string;
}

export interface StoreLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** Removes the lock file if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

/**
 * Lock files held by this process. Process-wide on purpose: a lock naming our own pid that is
 * not in this set was left by an earlier process that had the same pid (PID 1 in a restarted
 * container), and is stale.
 */
const heldByThisProcess = new Set<string>();

const MAX_ATTEMPTS = 5;

/**
 * Takes `<storePath>.lock`, so that a second process cannot write the same store. The lock
 * file is written completely under a private name and then hard-linked into place: link(2)
 * fails with EEXIST exactly like an O_EXCL create, but no other process can ever read a
 * half-written lock. A lock whose pid is dead on this host is stale and taken over.
 */
export async function acquireStoreLock(storePath: string, logger: Logger): Promise<StoreLock> {
  const path = `${storePath}.lock`;
  const owner: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    started_at: new Date(Date.now() - process.uptime() * 1000).toISOString(),
  };
  const text = `${JSON.stringify(owner)}\n`;
  const privatePath = `${path}.${process.pid}`;

  for (let attempt = 1; ; attempt++) {
    try {
      await writeFile(privatePath, text);
      await link(privatePath, path);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new StoreError("KW_STORE_LOCKED", `cannot create the store lock ${path}: ${(error as Error).message}`, { cause: error });
      }
    } finally {
      await unlink(privatePath).catch(() => undefined);
    }
    if (attempt >= MAX_ATTEMPTS) {
      throw new StoreError("KW_STORE_LOCKED", `cannot take the store lock ${path}: other processes keep competing for it`);
    }
    const holder = await readOwner(path);
    if (holder === "gone") continue; // released between our attempt and the read
    if (holder === "unreadable") {
      throw new StoreError("KW_STORE_LOCKED", `the store lock ${path} exists but is not a kaiawatch lock file; if no kaiawatch process uses this store, remove it`);
    }
    if (!isStale(path, holder)) {
      const where = holder.hostname === owner.hostname ? "" : ` on host ${holder.hostname}`;
      throw new StoreError(
        "KW_STORE_LOCKED",
        `the store ${storePath} is in use by process ${holder.pid}${where} (started ${holder.started_at}); stop it first (commands that change the store ask a running daemon through its status API)`,
      );
    }
    logger.warn({ lock: path, pid: holder.pid, hostname: holder.hostname, started_at: holder.started_at }, "taking over a stale store lock: its process is gone");
    await unlink(path).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    });
  }

  heldByThisProcess.add(path);
  let released = false;
  return {
    path,
    owner,
    async release() {
      if (released) return;
      released = true;
      heldByThisProcess.delete(path);
      // Only remove the file if it is still ours; never a lock another process took over.
      const holder = await readOwner(path);
      if (typeof holder === "object" && holder.pid === owner.pid && holder.hostname === owner.hostname && holder.started_at === owner.started_at) {
        await unlink(path).catch(() => undefined);
      }
    },
  };
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

function isStale(path: string, holder: LockOwner): boolean {
  // A process on another host cannot be checked from here: assume it is alive.
  if (holder.hostname !== hostname()) return false;
  if (holder.pid === process.pid) return !heldByThisProcess.has(path);
  return !isProcessAlive(holder.pid);
}

/**
 * True while the process can still be using the store. kill(pid, 0) alone is not enough: a
 * zombie (exited, not yet reaped by a parent such as a supervisor or npx that is itself
 * stuck) still answers it, and would block every restart until its parent reaps it.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  const state = processState(pid);
  // Z: zombie, X: dead (being reaped). Neither holds a file open or writes any more.
  return state !== "Z" && state !== "X";
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
