export interface BackoffPolicy {
  /** Ceiling of the first retry's wait; doubles with every retry. */
  baseMs: number;
  /** The ceiling never grows past this. */
  maxMs: number;
}

/**
 * Exponential backoff with full jitter: uniform in [0, min(maxMs, baseMs * 2^retry)] for
 * the retry numbered from 0, so that many callers failing together (an explorer or a sink
 * that was down) do not come back in lockstep.
 */
export function jitteredBackoff(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, retry));
  return Math.floor(random() * ceiling);
}
