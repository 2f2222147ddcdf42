export interface BackoffPolicy {
  /** Ceiling of the first retry's wait; doubles with every failed attempt. */
  baseMs: number;
  /** The ceiling never grows past this. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 2_000, maxMs: 10 * 60_000 };

/**
 * The wait after failed attempt number `attempt` (1-based): exponential backoff with full
 * jitter, uniform in [0, min(maxMs, baseMs * 2^(attempt-1))], so that many alerts failing
 * together (a sink that was down) do not come back in lockstep. A receiver's Retry-After is
 * a floor: the next attempt is never earlier than it asked, even if that exceeds maxMs.
 */
export function retryDelayMs(attempt: number, policy: BackoffPolicy, retryAfterMs?: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.floor(random() * ceiling);
  return retryAfterMs === undefined ? jittered : Math.max(retryAfterMs, jittered);
}
