/**
 * A counting semaphore for source ticks. Ten thousand sources firing at once would
 * otherwise each hold a request, its buffers and its retry state in memory while they
 * wait for the client's few connections; waiting for a slot holds only a callback.
 * Waiters take no abort listener (10,000 listeners on one signal cost quadratic time):
 * a waiter that gets its slot after a stop sees the aborted signal and gives it back.
 */
export interface TickSlots {
  acquire(): Promise<void>;
  release(): void;
}

export function createTickSlots(size: number): TickSlots {
  if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`tick slots must be a positive integer, not ${size}`);
  let free = size;
  // A queue with a moving head: shift() on a 10,000-element array copies it each time.
  const waiting: Array<(() => void) | undefined> = [];
  let head = 0;
  return {
    acquire() {
      if (free > 0) {
        free -= 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      const next = waiting[head];
      if (next === undefined) {
        free += 1;
        return;
      }
      waiting[head] = undefined;
      head += 1;
      if (head === waiting.length) {
        waiting.length = 0;
        head = 0;
      } else if (head > 1024 && head * 2 > waiting.length) {
        waiting.splice(0, head);
        head = 0;
      }
      next();
    },
  };
}
