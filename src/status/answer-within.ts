/** What a bounded reading got: the fresh value, or (past the bound) the last one known, with when it was read. */
export type BoundedReading<T> = { fresh: true; value: T } | { fresh: false; last: { value: T; atMs: number } | undefined };

/**
 * A reading that answers within `deadlineMs`: the value, or past the bound the last value
 * read. The health endpoints read the store, and a store that did not answer (PostgreSQL
 * waiting on a lock another session held) made /readyz and /status hang with it, where an
 * orchestrator wants an answer, and a person "the store is not answering". One read runs at a
 * time: callers while it runs wait for the same one, and a read still running past the bound
 * goes on, to be the last value known when it ends. A read that fails within the bound rejects.
 */
export function answerWithin<T>(
  read: () => Promise<T>,
  options: {
    deadlineMs: number;
    now: () => number;
    /** Failures that mean "not answering" (a store's timeout) rather than a fault: answered from the last value, as past the bound. */
    notAnswering?: (error: unknown) => boolean;
  },
): () => Promise<BoundedReading<T>> {
  let inFlight: Promise<T> | undefined;
  let last: { value: T; atMs: number } | undefined;
  return async () => {
    const reading = (inFlight ??= read()
      .then((value) => {
        last = { value, atMs: options.now() };
        return value;
      })
      .finally(() => (inFlight = undefined)));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), options.deadlineMs)));
    try {
      // race() listens to both: a read that fails after the bound is not an unhandled rejection.
      const outcome = await Promise.race([reading.then((value) => ({ value })), late]);
      return outcome === "late" ? { fresh: false, last } : { fresh: true, value: outcome.value };
    } catch (error) {
      if (options.notAnswering?.(error) === true) return { fresh: false, last };
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
}
