import { jitteredBackoff, type BackoffPolicy } from "../common/backoff.js";

export type { BackoffPolicy };

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 2_000, maxMs: 10 * 60_000 };

/**
 * The wait after failed attempt number `attempt` (1-based): exponential backoff with full
 * jitter, uniform in [0, min(maxMs, baseMs * 2^(attempt-1))], so that many alerts failing
 * together (a sink that was down) do not come back in lockstep. A receiver's Retry-After is
 * a floor: the next attempt is never earlier than it asked, even if that exceeds maxMs.
 */
export function retryDelayMs(attempt: number, policy: BackoffPolicy, retryAfterMs?: number, random: () => number = Math.random): number {
  const jittered = jitteredBackoff(attempt - 1, policy, random);
  return retryAfterMs === undefined ? jittered : Math.max(retryAfterMs, jittered);
}
