import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Whether this process may mount a tmpfs (root, or CAP_SYS_ADMIN): the full-disk tests need one. */
export const CAN_MOUNT_TMPFS = (() => {
  const dir = mkdtempSync(join(tmpdir(), "kaiawatch-tmpfs-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "ignore" });
    execFileSync("umount", [dir], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})();

/** Appends to `path` until the file system holding it is full (ENOSPC). */
export function fillFileSystem(path: string): void {
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
