/** One reading of the credit meter: when, and how many credits had been spent that UTC day. */
export interface CreditSample {
  /** ISO-8601 UTC. */
  at: string;
  spent: number;
}

export interface CreditHistory {
  /** Takes a reading unless the last one is younger than the minimum spacing (or `force`). */
  sample(force?: boolean): void;
  /** Today's readings (the meter's UTC day), oldest first, ending with a reading taken now. */
  today(): CreditSample[];
  /** Starts the periodic readings (unref'd: they never keep the process alive). */
  start(): void;
  stop(): void;
}

export interface CreditHistoryOptions {
  /** The meter as the status provider reads it: today's UTC day and spending. */
  read: () => { day: string; spent: number };
  now: () => number;
  /** Readings kept at most: a day at one a minute by default. */
  capacity?: number;
  /** Periodic readings this often (default 60 s). */
  intervalMs?: number;
  /** Readings on demand (a page polling /status) no closer than this (default 10 s). */
  minSpacingMs?: number;
}

/**
 * The small time series behind the status page's credit chart. The meter only knows today's
 * total, so the daemon keeps readings of it in a ring: periodic ones so that the chart has a
 * shape even when nobody watched, and on-demand ones so that it moves while someone does.
 * Readings of an earlier UTC day are dropped (the meter starts again from zero at midnight).
 */
export function createCreditHistory(options: CreditHistoryOptions): CreditHistory {
  const capacity = Math.max(2, options.capacity ?? 1440);
  const intervalMs = options.intervalMs ?? 60_000;
  const minSpacingMs = options.minSpacingMs ?? 10_000;
  const ring: Array<{ day: string; time: number; spent: number }> = [];
  let timer: NodeJS.Timeout | undefined;

  function sample(force = false): void {
    const time = options.now();
    const last = ring[ring.length - 1];
    const { day, spent } = options.read();
    if (!force && last !== undefined && last.day === day && time - last.time < minSpacingMs) return;
    // A new day (or a clock set back) starts the series again.
    if (last !== undefined && (last.day !== day || time < last.time)) ring.length = 0;
    ring.push({ day, time, spent });
    if (ring.length > capacity) ring.splice(0, ring.length - capacity);
  }

  function today(): CreditSample[] {
    const { day, spent } = options.read();
    const time = options.now();
    const out = ring.filter((s) => s.day === day).map((s) => ({ at: new Date(s.time).toISOString(), spent: s.spent }));
    out.push({ at: new Date(time).toISOString(), spent });
    return out;
  }

  return {
    sample,
    today,
    start() {
      if (timer) return;
      sample(true);
      timer = setInterval(() => sample(true), intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
