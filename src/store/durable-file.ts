import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Every file kaiawatch replaces goes through here, so that "written" means the same thing
 * everywhere: the new content is in a temporary file beside the target, fsynced, renamed
 * over the target, and the directory fsynced so that the rename itself survives a power
 * cut. A reader sees the old file or the new one, never half of one.
 */
export async function writeFileDurably(path: string, content: string): Promise<void> {
  // Unique per call: two writers (in one process or two) never share a temporary file.
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "w");
    try {
      await handle.writeFile(content, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(path));
}

/** Makes a file's content durable (before it is renamed into place). */
export function fsyncFileSync(path: string): void {
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes the entries of a directory (a rename into it) durable. */
export function fsyncDirectorySync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some file systems cannot fsync a directory; the rename is as durable as they allow.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

async function syncDirectory(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // As in fsyncDirectorySync: where a directory cannot be fsynced, the rename is as durable as it gets.
  } finally {
    await handle?.close();
  }
}
