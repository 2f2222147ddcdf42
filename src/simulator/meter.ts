import type { OperationName } from "../explorer/operations.js";

/** What the simulator counted since it started (or since `resetStats()`). */
export interface SimulatorStats {
  /** Per operation ("rpc" for JSON-RPC, "unknown" for paths that match none), per HTTP status ("reset" for a dropped connection). */
  requests: Record<string, Record<string, number>>;
  /** Credits charged per operation: its cost for every 2xx answer, nothing for errors. */
  credits: Partial<Record<OperationName, number>>;
  creditsTotal: number;
  /** Credits charged in the current UTC day: what the daily quota is compared with. */
  creditsToday: number;
  /** Per fault kind: serverError, latency, truncate, malformed, reset, maintenance, unauthorized, rateLimit, quota. */
  faults: Record<string, number>;
  /** JSON-RPC calls answered, per method (eth_getBalance counts a balance reading: a test waits for readings, not time). */
  rpcMethods: Record<string, number>;
}

const DAY_MS = 86_400_000;

/** The counters behind `stats()`, the per-second rate limit (a token bucket) and the daily credit quota. */
export function createMeter(now: () => number) {
  let requests: Record<string, Record<string, number>> = {};
  let credits: Partial<Record<OperationName, number>> = {};
  let creditsTotal = 0;
  let faults: Record<string, number> = {};
  let rpcMethods: Record<string, number> = {};
  let day = Math.floor(now() / DAY_MS);
  let today = 0;
  let tokens: number | undefined;
  let refilledAt = now();

  const rollDay = () => {
    const d = Math.floor(now() / DAY_MS);
    if (d !== day) {
      day = d;
      today = 0;
    }
  };

  return {
    request(op: string, status: string): void {
      const byStatus = (requests[op] ??= {});
      byStatus[status] = (byStatus[status] ?? 0) + 1;
    },
    rpcCall(method: string): void {
      rpcMethods[method] = (rpcMethods[method] ?? 0) + 1;
    },
    fault(kind: string): void {
      faults[kind] = (faults[kind] ?? 0) + 1;
    },
    charge(op: OperationName, cost: number): void {
      rollDay();
      credits[op] = (credits[op] ?? 0) + cost;
      creditsTotal += cost;
      today += cost;
    },
    /** Seconds until the quota resets when `cost` more credits would exceed it; undefined when allowed. */
    quotaRetryAfter(quota: number | undefined, cost: number): number | undefined {
      if (quota === undefined) return undefined;
      rollDay();
      if (today + cost <= quota) return undefined;
      return Math.max(1, Math.ceil(((day + 1) * DAY_MS - now()) / 1000));
    },
    /** Takes one token from the bucket; returns the seconds to wait when there is none. */
    rateRetryAfter(rps: number | undefined): number | undefined {
      if (rps === undefined || rps <= 0) return undefined;
      const t = now();
      const capacity = Math.max(1, rps);
      tokens = Math.min(capacity, (tokens ?? capacity) + ((t - refilledAt) / 1000) * rps);
      refilledAt = t;
      if (tokens >= 1) {
        tokens -= 1;
        return undefined;
      }
      return Math.max(1, Math.ceil((1 - tokens) / rps));
    },
    stats(): SimulatorStats {
      rollDay();
      return structuredClone({ requests, credits, creditsTotal, creditsToday: today, faults, rpcMethods });
    },
    reset(): void {
      requests = {};
      credits = {};
      creditsTotal = 0;
      faults = {};
      rpcMethods = {};
      today = 0;
      tokens = undefined;
      refilledAt = now();
    },
  };
}

export type Meter = ReturnType<typeof createMeter>;
