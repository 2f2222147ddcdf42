import { setImmediate } from "node:timers";

/**
 * Group commit: many mutations in one tick share one write (one COMMIT). Each `request()` joins the
 * next write that has not started yet; a write runs on setImmediate so that every caller of
 * the current tick is in it, and only one write runs at a time, so requests arriving while
 * a write is in flight form the next one. `write` must capture the state synchronously
 * when called (before its first await): whatever is mutated later belongs to the next write.
 */
export interface GroupCommit {
  /** Resolves when a write that started after this call succeeded; rejects with its error. */
  request(): Promise<void>;
  /**
   * Notes a change made in memory that needs no write of its own: the next write carries
   * it, and flush() writes it. For changes that a crash may lose at no cost.
   */
  defer(): void;
  /** Resolves when everything requested or deferred so far is durable; writes again after a failure. */
  flush(): Promise<void>;
  /**
   * The changes waiting for the next write were undone before it started (a disk error in one
   * caller's change rolled back the transaction they shared): every caller waiting for that
   * write is told now, with `error`. Left waiting, they resolved once a later write (a small
   * probe) succeeded, and a cursor move or a silence was reported done and was lost.
   */
  abort(error: unknown): void;
}

interface Batch {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export function createGroupCommit(write: () => Promise<void>): GroupCommit {
  let next: Batch | undefined;
  let inFlight: Batch | undefined;
  let scheduled = false;
  // The last finished write failed: flush() tries the disk again.
  let dirty = false;
  // Deferred changes that no write has started to carry yet.
  let deferred = false;

  const schedule = () => {
    if (scheduled || inFlight !== undefined) return;
    scheduled = true;
    setImmediate(run);
  };

  const run = () => {
    scheduled = false;
    const batch = next;
    next = undefined;
    if (batch === undefined) return;
    inFlight = batch;
    // The write captures the state now, deferred changes included.
    deferred = false;
    let writing: Promise<void>;
    try {
      writing = write();
    } catch (error) {
      writing = Promise.reject(error);
    }
    writing.then(
      () => {
        dirty = false;
        finish(batch, true, undefined);
      },
      (error: unknown) => {
        dirty = true;
        finish(batch, false, error);
      },
    );
  };

  const finish = (batch: Batch, ok: boolean, error: unknown) => {
    inFlight = undefined;
    if (next !== undefined) schedule();
    if (ok) batch.resolve();
    else batch.reject(error);
  };

  const request = () => {
    next ??= createBatch();
    schedule();
    return next.promise;
  };

  return {
    request,
    abort(error) {
      const batch = next;
      next = undefined;
      // Deferred changes went with the rollback too; flush() writes again (a probe) after it.
      deferred = false;
      dirty = true;
      batch?.reject(error);
    },
    defer() {
      deferred = true;
    },
    flush() {
      if (next !== undefined) return next.promise;
      if (deferred) return request();
      if (inFlight !== undefined) return inFlight.promise;
      if (dirty) return request();
      return Promise.resolve();
    },
  };
}

function createBatch(): Batch {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
