import { open, readFile, rename, unlink } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { Adapter } from "lowdb";
import { jsonErrorPosition } from "./json-error-position.js";
import { StoreError } from "./errors.js";

/**
 * A lowdb adapter that never leaves a torn file: each write goes to `<path>.tmp` in the same
 * directory, is fsynced, renamed over the store, and the directory is fsynced so that the
 * rename itself survives a power cut. `kill -9` at any moment leaves the old or the new file.
 *
 * The temporary name is fixed (not random) because the store lock guarantees one writer,
 * and a leftover from a crash is simply overwritten by the next write.
 */
export class AtomicFileAdapter<T> implements Adapter<T> {
  readonly path: string;
  readonly tempPath: string;
  /** Bytes of the file after the last successful write or read. */
  bytes = 0;

  private readonly serialize: (data: T) => string | Buffer;

  /** `serialize` replaces JSON.stringify, e.g. to reuse the encoding of unchanged parts. */
  constructor(path: string, options: { serialize?: (data: T) => string | Buffer } = {}) {
    this.path = path;
    this.tempPath = `${path}.tmp`;
    this.serialize = options.serialize ?? ((data) => JSON.stringify(data));
  }

  /** The parsed file, or null when it does not exist. Never modifies the file. */
  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new StoreError("KW_STORE_CORRUPT", `cannot read the store file ${this.path}: ${(error as Error).message}`, { cause: error });
    }
    this.bytes = Buffer.byteLength(text);
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      const at = jsonErrorPosition(text);
      const where = at === undefined ? "" : ` at line ${at.line}, column ${at.column} (byte offset ${at.offset})`;
      const what = text.length === 0 ? "the file is empty" : (error as Error).message;
      throw new StoreError(
        "KW_STORE_CORRUPT",
        `the store file ${this.path} is not valid JSON${where}: ${what}. kaiawatch will not overwrite it; repair it or move it away (a missing file starts an empty store)`,
        { cause: error },
      );
    }
  }

  /**
   * Serializes synchronously, before the first await: the group commit relies on a write
   * capturing exactly the mutations made before it was started.
   */
  async write(data: T): Promise<void> {
    const bytes = toBuffer(this.serialize(data));
    await this.writeBytes(bytes);
  }

  private async writeBytes(bytes: Buffer): Promise<void> {
    try {
      const file = await open(this.tempPath, "w");
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(this.tempPath, this.path);
    } catch (error) {
      // A half-written temporary file is harmless, but tidy; the store file is untouched.
      await unlink(this.tempPath).catch(() => undefined);
      throw new StoreError("KW_STORE_WRITE_FAILED", `cannot write the store file ${this.path}: ${(error as Error).message}`, { cause: error });
    }
    this.bytes = bytes.length;
    await syncDirectory(dirname(this.path)).catch((error: unknown) => {
      throw new StoreError("KW_STORE_WRITE_FAILED", `cannot sync the directory of the store file ${basename(this.path)}: ${(error as Error).message}`, { cause: error });
    });
  }
}

function toBuffer(value: string | Buffer): Buffer {
  return typeof value === "string" ? Buffer.from(value, "utf8") : value;
}

/** Makes a rename in `dir` durable. Some file systems cannot fsync a directory: nothing more to do there. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "ENOTSUP" && code !== "EISDIR" && code !== "EPERM") throw error;
  }
}
