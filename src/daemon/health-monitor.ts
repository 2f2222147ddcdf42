import type { Common } from "../common/common.js";
import { singleFlight } from "../common/single-flight.js";
import type { OperationalConfig } from "../config/types.js";
import { isStoreUnavailable } from "../store/errors.js";
import type { Store } from "../store/types.js";
import type { SourceState, WatchEngine } from "../watch/engine.js";
import type { PlannedSource } from "../watch/poller.js";
import { longestIntervalSeconds } from "../watch/schedule-firings.js";
import type { Schedule } from "../config/schedule.js";
import { createSourceHealthTracker, worstState, type SourceHealth, type SourceHealthState } from "../watch/source-health.js";
import { createBacklogTracker, createHeadTracker, currentConditions, readinessOf, sourceConditions, sourceOfCondition, type BudgetReading, type HeadReadingState } from "./operational-checks.js";
import type { Episode, OperationalCondition, OperationalMonitor } from "./operational-monitor.js";
import type { SharedHealth } from "./replica-health.js";
import { createHealthReadings } from "./health-readings.js";

/** A source with no successful tick for this many of its schedule's longest intervals (and at least STALE_MIN_MS) is stalled. */
export const STALE_INTERVALS = 3;
export const STALE_MIN_MS = 60_000;

/** Conditions a source's ticks tell: an episode of one from before a restart holds until the source ticks again. */
const TOLD_BY_A_TICK: ReadonlySet<string> = new Set(["source_stalled", "source_behind", "explorer_behind_head", "explorer_shape_changed"]);

/** The daemon's health at one instant: what /readyz, /status and the operational alerts read. */
export interface HealthSnapshot {
  /** The worst source state: the page's badge. */
  worst: SourceHealthState;
  sources: SourceHealth[];
  conditions: OperationalCondition[];
  /** The conditions that need a person (/readyz answers 503 while there is one), with the /readyz check naming each. */
  problems: Array<{ check: string; kind: string; summary: string }>;
  /** Conditions /readyz says in a check's detail without failing it (READINESS_NOTE_OF). */
  notes: Array<{ check: string; summary: string }>;
}

export interface HealthMonitorOptions {
  thresholds: OperationalConfig;
  sources: readonly PlannedSource[];
  /** The config's compiled schedules, by pattern (CompiledConfig.schedules); a source's missing here is compiled from its text. */
  schedules?: ReadonlyMap<string, Schedule>;
  engine: Pick<WatchEngine, "states">;
  store: Store;
  sinks: readonly string[];
  head: { state(): HeadReadingState };
  budget: { state(): BudgetReading };
  monitor: OperationalMonitor;
  /**
   * With replicas: whether this replica holds a source now (Ownership.holds). Only those are
   * judged: the others' ticks run elsewhere, and this engine's record of them (never ticked
   * here, or ticked before another replica took them) said "stalled" or "failing" of sources
   * that were fine. Absent: every source (one process).
   */
  holds?: (sourceKey: string) => boolean;
  /**
   * With replicas (and `holds`): where this replica publishes its verdict of the sources it
   * holds (every evaluation and judgeSources()), and where check() reads the other live
   * replicas' verdicts, so that the replica sending the operational alerts raises those of
   * sources held elsewhere too (replica-health.ts).
   */
  shared?: SharedHealth;
}

export interface HealthMonitor {
  /** The health now; cheap enough for every /readyz probe. */
  evaluate(): Promise<HealthSnapshot>;
  /**
   * Evaluates and sends the operational alerts of what started or cleared (the daemon's timer).
   * With replicas: this replica's conditions, the other live replicas' source conditions, and
   * the firing source episodes whose source no replica has a verdict of yet (see check()).
   */
  check(): Promise<HealthSnapshot>;
  /**
   * With replicas: judges the sources this replica holds and publishes the verdict, nothing
   * else (no outbox or store reads): what a replica that does not send the operational alerts
   * runs at each check.
   */
  judgeSources(): void;
  /**
   * With replicas, when this replica becomes the one that sends the operational alerts (it
   * gained the `operational` lease): takes the episodes firing now from the store, where the
   * previous sender left them, and seeds the verdicts that need time from them, as a restart
   * does. Without it, this replica's episodes were those of its own start: it fired again,
   * under new ids, what the previous sender had fired, and never resolved those.
   */
  resume(): Promise<void>;
}

export function createHealthMonitor(common: Common, options: HealthMonitorOptions): HealthMonitor {
  const { thresholds, store } = options;
  const startedAtMs = common.now();
  const scheduleOf = new Map(options.sources.map((source) => [source.key, source.schedule]));
  const staleBySchedule = new Map<string, number>();
  const baseStalledAfterMs = (key: string): number => {
    const schedule = scheduleOf.get(key);
    if (schedule === undefined) return Infinity;
    let ms = staleBySchedule.get(schedule);
    if (ms === undefined) {
      const interval = longestIntervalSeconds(options.schedules?.get(schedule) ?? schedule, startedAtMs);
      ms = Number.isFinite(interval) ? Math.max(STALE_MIN_MS, STALE_INTERVALS * interval * 1000) : Infinity;
      staleBySchedule.set(schedule, ms);
    }
    return ms;
  };
  // The budget's pause is not a stall (credits_exhausted says why nothing ticks): a source is
  // measured from the end of the last pause seen at the earliest, so the end of a pause does
  // not find every source stalled before its first tick of the new day.
  let pauseEndsMs: number | undefined;
  const lastOkOf = new Map<string, number>();
  const stalledAfterMs = (key: string): number => {
    const base = baseStalledAfterMs(key);
    if (pauseEndsMs === undefined) return base;
    return base + Math.max(0, Math.min(common.now(), pauseEndsMs) - (lastOkOf.get(key) ?? startedAtMs));
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
  const backlog = createBacklogTracker(thresholds);
  // A source failing before a restart is still failing after it, until a tick succeeds: its
  // streak is taken from the persisted episode, or the restart would resolve it and, minutes
  // later, fire it again under a new id.
  // The same for the head's conditions and a growing backlog, whose verdicts need time.
  // The conditions a source's tick tells (stalled, behind, the explorer behind) hold until
  // that source has finished a tick in this run: a check before it would resolve them.
  // With replicas check() keeps the source episodes instead, while no replica has a verdict of
  // their source (a source's streak here would be another holding's story anyway).
  const untilTicked = new Map<string, Episode>();
  const seedFrom = (episodes: readonly Episode[]): void => {
    for (const episode of episodes) {
      const subject = episode.key.slice(episode.kind.length + 1);
      if (episode.kind === "sink_backlog_growing") backlog.seedGrowing(subject);
      else if (episode.kind.startsWith("head_")) headTracker.seed(episode.kind, Date.parse(episode.since), episode.detail ?? {});
      else if (options.shared !== undefined) continue;
      else if (episode.kind === "source_failing") sourceHealth.seedStreak(subject, Date.parse(episode.since) - thresholds.source_failing_after);
      else if (TOLD_BY_A_TICK.has(episode.kind)) untilTicked.set(episode.key, episode);
    }
  };
  seedFrom(options.monitor.active());

  const { readOutbox, readStoredCursors, withStoredCursors } = createHealthReadings(store, options.sinks);

  /** The states of the sources this replica judges (all, or those it holds), noting since when it holds each. */
  function judgedOf(states: SourceState[], nowMs: number): SourceState[] {
    const budget = options.budget.state();
    if (budget.paused_until !== null) pauseEndsMs = Date.parse(budget.paused_until);
    for (const state of states) if (state.last_ok_at !== null) lastOkOf.set(state.key, Date.parse(state.last_ok_at));
    let judged = states;
    if (options.holds) {
      const holds = options.holds;
      judged = states.filter((state) => holds(state.key));
      const held = new Set(judged.map((state) => state.key));
      for (const key of [...heldSince.keys()]) if (!held.has(key)) heldSince.delete(key);
      for (const key of held) if (!heldSince.has(key)) heldSince.set(key, evaluated ? nowMs : startedAtMs);
    }
    evaluated = true;
    return judged;
  }

  /** The judged sources that have a verdict here: failing or stalled, or a successful tick since this replica took them. */
  let settledHere = new Set<string>();
  function publish(judged: readonly SourceState[], sources: readonly SourceHealth[]): void {
    if (options.shared === undefined) return;
    const settled = new Set<string>();
    const unsettled: string[] = [];
    for (const [index, health] of sources.entries()) {
      const lastOk = judged[index]!.last_ok_at;
      const verdict = health.state === "failing" || health.state === "stalled" || (lastOk !== null && Date.parse(lastOk) >= (heldSince.get(health.key) ?? -Infinity));
      if (verdict) settled.add(health.key);
      else unsettled.push(health.key);
    }
    settledHere = settled;
    // Scrubbed before the heartbeat stores it (and cuts its texts, which would leave a secret's head).
    options.shared.publish({ conditions: common.secrets.redactDeep(sourceConditions(thresholds, sources, new Map(judged.map((state) => [state.key, state.last_error])))), unsettled });
  }

  /**
   * The store is read first, and everything the verdicts observe (the clock, the sources'
   * states, the head, the budget) only after its answers: an evaluation that waited on a
   * stalled store and observed a head read before the wait made the head look as if it went
   * backwards (two false `head_backwards` pairs after a PostgreSQL stall).
   */
  async function evaluateNow(): Promise<HealthSnapshot> {
    const stored = options.engine.states().some((state) => state.cursor === null) ? new Map((await readStoredCursors()).map((cursor) => [cursor.key, cursor.block])) : new Map<string, number>();
    const outbox = await readOutbox();
    const storeStats = await store.stats();
    const nowMs = common.now();
    const states = withStoredCursors(options.engine.states(), stored);
    const head = options.head.state();
    const budget = options.budget.state();
    const judged = judgedOf(states, nowMs);
    const sources = sourceHealth.observe(judged, head.block, nowMs);
    publish(judged, sources);
    const highestCursor = states.reduce<number | null>((max, state) => (state.cursor !== null && (max === null || state.cursor > max) ? state.cursor : max), null);
    const conditions = [
      ...headTracker.observe(head, highestCursor, nowMs),
      ...backlog.observe(outbox.sinks, nowMs),
      ...currentConditions(thresholds, {
        nowMs,
        sources,
        lastErrors: new Map(states.map((state) => [state.key, state.last_error])),
        ...outbox,
        store: storeStats, storePath: store.path,
        budget,
        headError: head.error,
      }),
    ];
    for (const [key, episode] of untilTicked) {
      const state = states.find((candidate) => candidate.key === key.slice(episode.kind.length + 1));
      if (state === undefined || state.last_tick_at !== null) untilTicked.delete(key);
      else if (!conditions.some((condition) => condition.key === key)) conditions.push({ key, kind: episode.kind, summary: episode.summary, detail: episode.detail ?? {} });
    }
    return { worst: worstState(sources.map((source) => source.state)), sources, conditions, ...readinessOf(conditions) };
  }

  /**
   * This replica's conditions, plus the source conditions the other live replicas judge of
   * the sources they hold (deduplicated by key), plus every firing source episode whose
   * source has no verdict anywhere yet: held by no live replica (its holder died and its
   * lease has not been taken over yet), or taken over and not ticked successfully since (nor
   * failing or stalled there). So a source that changes holder keeps its episode (one id)
   * until its new holder has a verdict: its success resolves it, its failure carries it on.
   * The store unreachable: nothing is known of the others, so their episodes are kept.
   */
  async function withOtherReplicas(shared: SharedHealth, own: readonly OperationalCondition[]): Promise<OperationalCondition[]> {
    let others: Awaited<ReturnType<SharedHealth["others"]>> = { conditions: [], settled: new Set() };
    try {
      others = await shared.others();
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
    }
    const merged = new Map(own.map((condition) => [condition.key, condition]));
    for (const condition of others.conditions) if (!merged.has(condition.key)) merged.set(condition.key, condition);
    for (const episode of options.monitor.active()) {
      if (merged.has(episode.key)) continue;
      const source = sourceOfCondition(episode);
      if (source === undefined || !scheduleOf.has(source) || settledHere.has(source) || others.settled.has(source)) continue;
      merged.set(episode.key, { key: episode.key, kind: episode.kind, summary: episode.summary, detail: episode.detail ?? {} });
    }
    return [...merged.values()];
  }

  // One evaluation at a time: /readyz, /status and the timer asking together share it, so
  // that evaluations never finish out of order (nor pile up on a store that does not answer).
  const evaluate = singleFlight(evaluateNow);

  return {
    evaluate,
    async check() {
      const snapshot = await evaluate();
      const conditions = options.shared === undefined ? snapshot.conditions : await withOtherReplicas(options.shared, snapshot.conditions);
      await options.monitor.update(conditions);
      return snapshot;
    },
    async resume() {
      await options.monitor.reload();
      seedFrom(options.monitor.active());
    },
    judgeSources() {
      if (options.shared === undefined) return;
      const nowMs = common.now();
      // No store read: a held source's stored cursor would not count anyway (the tracker
      // judges one not ticked since this replica took it as unknown, its lag included).
      const judged = judgedOf(options.engine.states(), nowMs);
      publish(judged, sourceHealth.observe(judged, options.head.state().block, nowMs));
    },
  };
}
