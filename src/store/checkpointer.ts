import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * Checkpoints in a thread of its own: copying the WAL's pages into the database and fsyncing
 * it takes tens of milliseconds once the WAL holds a few hundred commits, and on the main
 * thread that time would land in whichever commit came next. The thread has its own SQLite
 * connection; a PASSIVE checkpoint never blocks the writer (SQLite lets a checkpoint and a
 * commit run at once in WAL mode), and the writer starts the WAL over once it is copied.
 *
 * The thread runs plain JavaScript given as text (no file of its own to find from the
 * TypeScript sources under vitest or tsx, or from dist/).
 */
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma("busy_timeout = 5000");
db.pragma("synchronous = FULL");
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)");
    parentPort.postMessage({ ok: true, result });
  } catch (error) {
    parentPort.postMessage({ ok: false, error: String(error && error.message || error) });
  }
});
`;

export interface Checkpointer {
  /** Asks for a checkpoint; ignored while one runs. Calls `done` with the outcome. */
  request(): void;
  /** Ends the thread and its connection (before the store's own connection closes). */
  close(): Promise<void>;
}

export function createCheckpointer(path: string, done: (outcome: { ok: true } | { ok: false; error: string }) => void): Checkpointer {
  const module = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(THREAD, { eval: true, workerData: { path, module } });
  // The thread must not keep a finished process alive, nor a failed one crash it.
  worker.unref();
  let running = false;
  let failed: string | undefined;
  worker.on("message", (reply: { ok: boolean; error?: string }) => {
    running = false;
    done(reply.ok ? { ok: true } : { ok: false, error: reply.error ?? "unknown" });
  });
  worker.on("error", (error) => {
    failed = error.message;
    running = false;
    done({ ok: false, error: failed });
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  return {
    request() {
      if (running || failed !== undefined) return;
      running = true;
      worker.postMessage("checkpoint");
    },
    async close() {
      // Referenced again: the process must wait for the thread to close its connection.
      worker.ref();
      if (failed === undefined) worker.postMessage("close");
      else await worker.terminate();
      await exited;
    },
  };
}
