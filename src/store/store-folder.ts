import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { mkdir, open, unlink } from "node:fs/promises";
import { userInfo } from "node:os";
import { dirname } from "node:path";
import { StoreError } from "./errors.js";

/**
 * Makes the folder of the store file if it is missing and writes a probe file in it, so that
 * a folder this process cannot write is refused with its cause (the folder, the permission,
 * the user) instead of surfacing later as SQLite's "unable to open database file" on the lock.
 * The probe is removed at once.
 */
export async function ensureStoreFolderWritable(storePath: string): Promise<void> {
  const folder = dirname(storePath);
  try {
    await mkdir(folder, { recursive: true });
  } catch (error) {
    throw notWritable(folder, error, "create");
  }
  const probe = `${storePath}.probe-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    const handle = await open(probe, "wx");
    try {
      await handle.writeFile("kaiawatch store probe\n");
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await unlink(probe).catch(() => undefined);
    throw notWritable(folder, error, "write");
  }
  await unlink(probe).catch((error: unknown) => {
    throw notWritable(folder, error, "write");
  });
}

/** The user this process runs as, as a message names it: `user node (uid 1000)`, or `uid 1000` where it has no name. */
export function processUser(): string {
  const uid = process.getuid?.();
  try {
    const { username } = userInfo();
    return uid === undefined ? `user ${username}` : `user ${username} (uid ${uid})`;
  } catch {
    // A uid without an entry in /etc/passwd (docker run --user 1234).
    return uid === undefined ? "this process's user" : `uid ${uid}`;
  }
}

/**
 * KW_STORE_NOT_WRITABLE for a failure to create (`create`) or write in (`write`) the store's
 * folder: the folder, what is missing (the permission, a folder, space) and the user.
 */
export function notWritable(folder: string, error: unknown, step: "create" | "write"): StoreError {
  const code = (error as NodeJS.ErrnoException).code;
  const user = processUser();
  const fix = "give that user write and search (w and x) permission there (the Docker image runs kaiawatch as node, uid 1000: chown 1000:1000 the folder mounted at /data), or set store.path to a folder it can write";
  let why: string;
  switch (code) {
    case "EACCES":
    case "EPERM": {
      const at = step === "create" ? nearestExisting(folder) : folder;
      why = `${user} has no write permission on ${at}${describeOwner(at)}${step === "create" ? `, where it must create ${folder}` : ""}; ${fix}`;
      break;
    }
    case "ENOTDIR":
    case "EEXIST":
      why = `${nearestExisting(folder)} is a file, not a folder; set store.path to a path inside a folder`;
      break;
    case "EROFS":
      why = `${folder} is on a read-only file system; mount it writable, or set store.path to a folder on a writable one`;
      break;
    case "ENOSPC":
    case "EDQUOT":
      why = `no space left for ${user} on the file system of ${folder} (${code}); free some, or set store.path elsewhere`;
      break;
    default:
      why = `${user} cannot ${step === "create" ? "create it" : "create a file in it"}: ${(error as Error).message}`;
  }
  return new StoreError("KW_STORE_NOT_WRITABLE", `cannot ${step === "create" ? "create" : "write in"} the store folder ${folder}: ${why}`, { cause: error });
}

/**
 * KW_STORE_NOT_WRITABLE for a file of the store this process cannot open for writing: one
 * left by another user (root, say), or one SQLite could not open (SQLITE_CANTOPEN, _READONLY, _PERM).
 */
export function fileNotWritable(path: string, error: unknown): StoreError {
  return new StoreError(
    "KW_STORE_NOT_WRITABLE",
    `cannot write the store file ${path}: ${processUser()} cannot open it for writing${describeOwner(path)} (${(error as Error).message}); give that user write permission on it and its folder, or set store.path to a folder it can write`,
    { cause: error },
  );
}

/** The deepest existing path at or above `path`: where a missing folder would be created. */
function nearestExisting(path: string): string {
  for (let at = path; ; at = dirname(at)) {
    try {
      statSync(at);
      return at;
    } catch {
      if (dirname(at) === at) return at;
    }
  }
}

/** ` (owner uid 0, mode 755)`, or nothing where it cannot be read. */
function describeOwner(path: string): string {
  try {
    const stat = statSync(path);
    return ` (owner uid ${stat.uid}, mode ${(stat.mode & 0o777).toString(8)})`;
  } catch {
    return "";
  }
}
