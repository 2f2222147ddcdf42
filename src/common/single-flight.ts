/**
 * `run` at most once at a time: a call while one is under way shares its promise, so that
 * callers asking together never start a second run, nor see runs finish out of order.
 */
export function singleFlight<T>(run: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => (running ??= run().finally(() => (running = undefined)));
}
