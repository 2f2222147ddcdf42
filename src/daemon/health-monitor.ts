import type { Common } from "../common/common.js";
import type { OperationalConfig } from "../config/types.js";
import { isStoreError } from "../store/errors.js";
import type { Store } from "../store/types.js";
import type { WatchEngine } from "../watch/engine.js";
import type { PlannedSource } from "../watch/poller.js";
import { longestIntervalSeconds } from "../watch/schedule-firings.js";
import { createSourceHealthTracker, worstState, type SourceHealth, type SourceHealthState } from "../watch/source-health.js";
import { createHeadTracker, currentConditions, READINESS_CHECK_OF, type HeadReadingState } from "./operational-checks.js";
import type { OperationalCondition, OperationalMonitor } from "./operational-monitor.js";

/** A source with no successful tick for this many of its schedule's longest intervals (and at least STALE_MIN_MS) is stalled. */
export const STALE_INTERVALS = 3;
export const STALE_MIN_MS = 60_000;

/** The daemon's health at one instant: what /readyz, /status and the operational alerts read. */
export interface HealthSnapshot {
  /** The worst source state: the page's badge. */
  worst: SourceHealthState;
  sources: SourceHealth[];
  conditions: OperationalCondition[];
  /** The conditions that need a person (/readyz answers 503 while there is one), with the /readyz check naming each. */
  problems: Array<{ check: string; kind: string; summary: string }>;
}

export interface HealthMonitorOptions {
  thresholds: OperationalConfig;
  sources: readonly PlannedSource[];
  engine: Pick<WatchEngine, "states">;
  store: Store;
  sinks: readonly string[];
  head: { state(): HeadReadingState };
  budget: { state(): { paused_until: string | null } };
  monitor: OperationalMonitor;
  /**
   * With replicas: whether this replica holds a source now (Ownership.holds). Only those are
   * judged: the others' ticks run elsewhere, and this engine's record of them (never ticked
   * here, or ticked before another replica took them) said "stalled" or "failing" of sources
   * that were fine. Absent: every source (one process).
   */
  holds?: (sourceKey: string) => boolean;
}

export interface HealthMonitor {
  /** The health now; cheap enough for every /readyz probe. */
  evaluate(): Promise<HealthSnapshot>;
  /** Evaluates and sends the operational alerts of what started or cleared (the daemon's timer). */
  check(): Promise<HealthSnapshot>;
}

export function createHealthMonitor(common: Common, options: HealthMonitorOptions): HealthMonitor {
  const { thresholds, store } = options;
  const startedAtMs = common.now();
  const scheduleOf = new Map(options.sources.map((source) => [source.key, source.schedule]));
  const staleBySchedule = new Map<string, number>();
  const stalledAfterMs = (key: string): number => {
    const schedule = scheduleOf.get(key);
    if (schedule === undefined) return Infinity;
    let ms = staleBySchedule.get(schedule);
    if (ms === undefined) {
      const interval = longestIntervalSeconds(schedule, startedAtMs);
      ms = Number.isFinite(interval) ? Math.max(STALE_MIN_MS, STALE_INTERVALS * interval * 1000) : Infinity;
      staleBySchedule.set(schedule, ms);
    }
    return ms;
  };
  // Since when this replica holds each source; the sources held at the first evaluation count from the start.
  const heldSince = new Map<string, number>();
  let evaluated = false;
  const sourceHealth = createSourceHealthTracker({
    failingAfterMs: thresholds.source_failing_after,
    behindBlocks: thresholds.source_behind_blocks,
    stalledAfterMs,
    startedAtMs,
    heldSinceMs: options.holds ? (key) => heldSince.get(key) : undefined,
  });
  const headTracker = createHeadTracker(thresholds, startedAtMs);
  // A source failing before a restart is still failing after it, until a tick succeeds: its
  // streak is taken from the persisted episode, or the restart would resolve it and, minutes
  // later, fire it again under a new id.
  for (const episode of options.monitor.active()) {
    if (episode.kind !== "source_failing") continue;
    const key = episode.key.slice("source_failing:".length);
    sourceHealth.seedStreak(key, Date.parse(episode.since) - thresholds.source_failing_after);
  }

  type OutboxReading = Pick<Parameters<typeof currentConditions>[1], "sinks" | "deadLetters">;
  let lastOutbox: OutboxReading = { sinks: options.sinks.map((name) => ({ name, pending: 0, oldest: undefined })), deadLetters: 0 };
  /**
   * The outbox as the sink and dead-letter conditions read it. A store that cannot be read
   * (PostgreSQL down) keeps the last reading: the evaluation must go on, or /readyz failed with
   * a 500 instead of saying 503 "the store cannot be read" (status/daemon-status.ts).
   */
  async function readOutbox(): Promise<OutboxReading> {
    try {
      lastOutbox = {
        sinks: await Promise.all(options.sinks.map(async (name) => ({ name, pending: await store.countOutbox({ sink: name, state: "pending" }), oldest: (await store.listOutbox({ sink: name, state: "pending", limit: 1 }))[0] }))),
        deadLetters: await store.countOutbox({ state: "dead" }),
      };
    } catch (error) {
      if (!isStoreError(error, "KW_STORE_UNREACHABLE")) throw error;
    }
    return lastOutbox;
  }

  async function evaluate(): Promise<HealthSnapshot> {
    const nowMs = common.now();
    const states = options.engine.states();
    const head = options.head.state();
    let judged = states;
    if (options.holds) {
      const holds = options.holds;
      judged = states.filter((state) => holds(state.key));
      const held = new Set(judged.map((state) => state.key));
      for (const key of [...heldSince.keys()]) if (!held.has(key)) heldSince.delete(key);
      for (const key of held) if (!heldSince.has(key)) heldSince.set(key, evaluated ? nowMs : startedAtMs);
    }
    evaluated = true;
    const sources = sourceHealth.observe(judged, head.block, nowMs);
    const highestCursor = states.reduce<number | null>((max, state) => (state.cursor !== null && (max === null || state.cursor > max) ? state.cursor : max), null);
    const conditions = [
      ...headTracker.observe(head, highestCursor, nowMs),
      ...currentConditions(thresholds, {
        nowMs,
        sources,
        lastErrors: new Map(states.map((state) => [state.key, state.last_error])),
        ...(await readOutbox()),
        store: await store.stats(),
        storePath: store.path,
        budgetPausedUntil: options.budget.state().paused_until,
      }),
    ];
    const problems = conditions.flatMap(({ kind, summary }) => {
      const check = READINESS_CHECK_OF.get(kind);
      return check === undefined ? [] : [{ check, kind, summary }];
    });
    return { worst: worstState(sources.map((source) => source.state)), sources, conditions, problems };
  }

  return {
    evaluate,
    async check() {
      const snapshot = await evaluate();
      // The budget guard sends the credit budget's own alerts (80% and spent, once per UTC day):
      // its condition only counts for readiness here, or the operational sinks would hear it twice.
      await options.monitor.update(snapshot.conditions.filter((condition) => condition.kind !== "credits_exhausted"));
      return snapshot;
    },
  };
}
