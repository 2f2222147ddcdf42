import { jitteredBackoff } from "../common/backoff.js";
import { sleep } from "../common/sleep.js";
import { ExplorerHttpError, shouldRetry } from "./errors.js";

export interface RetryPolicy {
  /** Attempts after the first one. */
  maxRetries: number;
  baseMs: number;
  maxMs: number;
}

export interface RetryOptions extends RetryPolicy {
  signal: AbortSignal;
  /** Called before each wait; `attempt` is the number of the retry about to happen (1-based). */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** Replaceable in tests; Math.random by default. */
  random?: () => number;
  /**
   * Given a Retry-After it will honour, holds every caller sharing the limit (the explorer
   * client's rate limiter) for that long, this retry included: the retry then waits only its
   * backoff before asking the limiter again. Absent: the retry sleeps the Retry-After itself.
   */
  pauseFor?: (ms: number) => void;
}


/**
 * The wait before retry number `attempt + 1`, or undefined when the server asked for a pause
 * longer than `maxMs`: holding a request that long helps nobody (a daily quota answers with
 * hours), so the error goes back to the caller, whose next tick will try again.
 */
export function retryDelay(error: unknown, attempt: number, policy: Pick<RetryPolicy, "baseMs" | "maxMs">, random: () => number = Math.random): number | undefined {
  const backoff = jitteredBackoff(attempt, policy, random);
  const retryAfter = error instanceof ExplorerHttpError ? error.retryAfterMs : undefined;
  if (retryAfter === undefined) return backoff;
  if (retryAfter > policy.maxMs) return undefined;
  return Math.max(retryAfter, backoff);
}


/**
 * Runs `attempt` until it succeeds, `shouldRetry` says no, or the retries are used up;
 * waits (abortably) between attempts. Used by the explorer client and the chain head reader.
 */
export async function withRetries<T>(run: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run(attempt);
    } catch (error) {
      if (attempt >= options.maxRetries || options.signal.aborted || !shouldRetry(error)) throw error;
      const delay = retryDelay(error, attempt, options, options.random);
      if (delay === undefined) throw error;
      options.onRetry?.(error, attempt + 1, delay);
      const retryAfter = error instanceof ExplorerHttpError ? error.retryAfterMs : undefined;
      if (retryAfter !== undefined && options.pauseFor) {
        options.pauseFor(retryAfter);
        await sleep(jitteredBackoff(attempt, options, options.random), options.signal);
      } else {
        await sleep(delay, options.signal);
      }
    }
  }
}

/**
 * A signal aborted when any of the given ones is. Unlike AbortSignal.any, its listeners
 * are removed by `dispose()` as soon as the call ends, so long-lived signals (the process
 * shutdown signal) do not collect one listener per request.
 */
export function linkSignals(...signals: (AbortSignal | undefined)[]): { signal: AbortSignal; dispose: () => void } {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length === 1) return { signal: present[0] as AbortSignal, dispose: () => {} };
  const controller = new AbortController();
  parentsOf.set(controller.signal, present);
  const aborted = present.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const removals = present.map((s) => onAbort(s, (reason) => controller.abort(reason)));
  return { signal: controller.signal, dispose: () => removals.forEach((remove) => remove()) };
}

// The signals that each linked or child signal follows (weakly: the entry goes with the signal).
const parentsOf = new WeakMap<AbortSignal, readonly AbortSignal[]>();

/**
 * Whether `signal` is `ancestor` or was linked to it (through linkSignals or childSignal, at
 * any depth), so that it aborts whenever `ancestor` does: a caller given such a signal need
 * not link it to `ancestor` again. The explorer client linked every tick's own signal to the
 * shutdown signal anew, 10,000 links a tick, each kept until a collection finalised it.
 */
export function follows(signal: AbortSignal, ancestor: AbortSignal): boolean {
  if (signal === ancestor) return true;
  return parentsOf.get(signal)?.some((parent) => follows(parent, ancestor)) ?? false;
}

/**
 * A signal of its own that follows `parent`, through the parent's one fan-out listener: a
 * loop that waits on it, however many listeners it adds, adds none to the parent. Several
 * loops sharing one signal (seven sink workers, each with a sleep and a rate limiter
 * waiting) passed Node's limit of ten listeners and printed a warning into the JSON log.
 */
export function childSignal(parent: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  parentsOf.set(controller.signal, [parent]);
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  return { signal: controller.signal, dispose: onAbort(parent, (reason) => controller.abort(reason)) };
}

// One listener per long-lived signal, fanning out to the calls linked to it: adding an
// EventTarget listener scans the ones already there, so 10,000 calls in flight on the
// shutdown signal made each new call slower (quadratic in all); a Set adds and removes in O(1).
const fanOuts = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

function onAbort(signal: AbortSignal, callback: (reason: unknown) => void): () => void {
  let callbacks = fanOuts.get(signal);
  if (callbacks === undefined) {
    const created = new Set<(reason: unknown) => void>();
    callbacks = created;
    fanOuts.set(signal, created);
    signal.addEventListener(
      "abort",
      () => {
        for (const run of [...created]) run(signal.reason);
        created.clear();
      },
      { once: true },
    );
  }
  const set = callbacks;
  set.add(callback);
  return () => set.delete(callback);
}
