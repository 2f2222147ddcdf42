import { jitteredBackoff } from "../common/backoff.js";
import { sleep } from "../common/sleep.js";

export interface RetryPolicy {
  /** Attempts after the first one. */
  maxRetries: number;
  baseMs: number;
  maxMs: number;
}

export interface RetryOptions extends RetryPolicy {
  signal: AbortSignal;
  /** The one decision whether a failure is worth another attempt, from the error's type (each client has its own). */
  shouldRetry: (error: unknown) => boolean;
  /** The pause the server asked for with this error (Retry-After), in milliseconds; undefined when none. */
  retryAfterOf: (error: unknown) => number | undefined;
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
export function retryDelay(retryAfter: number | undefined, attempt: number, policy: Pick<RetryPolicy, "baseMs" | "maxMs">, random: () => number = Math.random): number | undefined {
  const backoff = jitteredBackoff(attempt, policy, random);
  if (retryAfter === undefined) return backoff;
  if (retryAfter > policy.maxMs) return undefined;
  return Math.max(retryAfter, backoff);
}

/**
 * Runs `attempt` until it succeeds, `shouldRetry` says no, or the retries are used up;
 * waits (abortably) between attempts. Used by the explorer client and the JSON-RPC client.
 */
export async function withRetries<T>(run: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run(attempt);
    } catch (error) {
      if (attempt >= options.maxRetries || options.signal.aborted || !options.shouldRetry(error)) throw error;
      const retryAfter = options.retryAfterOf(error);
      const delay = retryDelay(retryAfter, attempt, options, options.random);
      if (delay === undefined) throw error;
      options.onRetry?.(error, attempt + 1, delay);
      if (retryAfter !== undefined && options.pauseFor) {
        options.pauseFor(retryAfter);
        await sleep(jitteredBackoff(attempt, options, options.random), options.signal);
      } else {
        await sleep(delay, options.signal);
      }
    }
  }
}
