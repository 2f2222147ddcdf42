/**
 * Due ticks, run at most `size` at a time in the order they were queued. A firing of
 * 10,000 sources queues 10,000 small entries. Suspended async calls waiting for a slot
 * would each hold a frame, promises and closures until their turn: long enough to reach
 * V8's old generation, ~24 MB of garbage a firing that only a full collection frees.
 */
export interface TickQueue<T> {
  push(entry: T): void;
  /** Resolves once nothing is queued or running. */
  whenIdle(): Promise<void>;
}

/** `run` handles its own errors; a rejection only frees the slot. */
export function createTickQueue<T>(size: number, run: (entry: T) => Promise<void>): TickQueue<T> {
  if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`the tick queue needs a positive integer size, not ${size}`);
  // A moving head: shift() on a 10,000-element array copies it each time.
  const entries: Array<T | undefined> = [];
  let head = 0;
  let active = 0;
  let idleWaiters: Array<() => void> = [];

  function pump(): void {
    while (active < size && head < entries.length) {
      const entry = entries[head] as T;
      entries[head] = undefined;
      head += 1;
      active += 1;
      run(entry).then(finished, finished);
    }
    if (head === entries.length) {
      entries.length = 0;
      head = 0;
    } else if (head > 1024 && head * 2 > entries.length) {
      entries.splice(0, head);
      head = 0;
    }
    if (active === 0 && entries.length === 0 && idleWaiters.length > 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  function finished(): void {
    active -= 1;
    pump();
  }

  return {
    push(entry) {
      entries.push(entry);
      pump();
    },
    whenIdle() {
      if (active === 0 && head === entries.length) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
