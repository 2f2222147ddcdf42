import type { Cursor } from "../store/types.js";
import type { SourceState } from "../watch/engine.js";
import { watchesOf, type PlannedSource } from "../watch/poller.js";
import type { ReplicaView } from "./daemon-status.js";

/** What the sources section of /status is built from, read once per /status. */
export interface SourceViewInputs {
  sources: readonly PlannedSource[];
  /** The engine's state of each source this process ticks. */
  states: readonly SourceState[];
  cursors: ReadonlyMap<string, Cursor>;
  /** The health monitor's state of each source (with hysteresis). */
  health: ReadonlyArray<{ key: string; state: string; failing_since: string | null; detail: string }>;
  headBlock: number | null;
  /** The live replicas (absent without replicas). */
  replicas: readonly ReplicaView[] | undefined;
  replicaId: string | undefined;
  /** Which replica holds each source key and `sink:<name>` (holdersOf). */
  holderOf: ReadonlyMap<string, string>;
}

/**
 * With replicas, which one holds each source and sink: a source held elsewhere ticks there,
 * and this replica's own ticks of it (before a handover) say nothing of it now.
 */
export function holdersOf(replicas: readonly ReplicaView[] | undefined): Map<string, string> {
  const holderOf = new Map<string, string>();
  for (const replica of replicas ?? []) for (const key of [...replica.sources, ...replica.sinks.map((sink) => `sink:${sink}`)]) holderOf.set(key, replica.id);
  return holderOf;
}

/** The sources section of /status: each planned source with its cursor, lag, ticks and health. */
export function sourceViews(inputs: SourceViewInputs) {
  const { cursors, replicas, holderOf } = inputs;
  const states = new Map(inputs.states.map((state) => [state.key, state]));
  const healthOf = new Map(inputs.health.map((source) => [source.key, source]));
  return inputs.sources.map((source) => {
    const holder = replicas === undefined ? null : (holderOf.get(source.key) ?? null);
    const elsewhere = replicas !== undefined && holder !== inputs.replicaId;
    const state = elsewhere ? undefined : states.get(source.key);
    const sourceHealth = healthOf.get(source.key);
    const cursor = cursors.get(source.key)?.block ?? null;
    return {
      // The replica holding the source (null: none now, or one process without replicas), and
      // when its cursor was last written: the holder's last tick that moved it, wherever it runs.
      holder,
      held_here: !elsewhere,
      cursor_updated_at: cursors.get(source.key)?.updated_at ?? null,
      key: source.key,
      watch: source.watch,
      // Every watch it serves (a router sharing the hot wallet's every-block scan is listed here).
      watches: watchesOf(source),
      description: source.description,
      family: source.family,
      schedule: source.schedule,
      cursor,
      lag: cursor !== null && inputs.headBlock !== null ? Math.max(0, inputs.headBlock - cursor) : null,
      running: state?.running ?? false,
      // ok | starting | catching_up | retrying | failing | stalled (docs/operations.md, "Readiness").
      state: sourceHealth?.state ?? null,
      state_detail: sourceHealth?.detail ?? null,
      failing_since: sourceHealth?.failing_since ?? null,
      last_tick_at: elsewhere ? (cursors.get(source.key)?.updated_at ?? null) : (state?.last_tick_at ?? null),
      last_ok_at: state?.last_ok_at ?? null,
      last_outcome: state?.last_outcome ?? null,
      last_error: state?.last_error ?? null,
      last_tick_seconds: state?.last_tick_seconds ?? null,
      ticks: state?.ticks ?? 0,
      skipped: state?.skipped ?? 0,
    };
  });
}
