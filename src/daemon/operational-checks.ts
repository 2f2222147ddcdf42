import type { OperationalConfig } from "../config/types.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import type { StoreStats } from "../store/types.js";
import type { SourceHealth } from "../watch/source-health.js";
import type { OperationalCondition } from "./operational-monitor.js";

/** What the head probe remembers, as the checks read it. */
export interface HeadReadingState {
  block: number | null;
  read_at: string | null;
  error: string | null;
}

export interface HeadTracker {
  /** Notes the head probe's state; returns the head's conditions now. */
  observe(state: HeadReadingState, highestCursor: number | null, nowMs: number): OperationalCondition[];
}

/**
 * The chain head seen over time: unreachable (reads failing for `source_failing_after`), stuck
 * (the same block for `head_stuck_after`), or behind where we were (below the highest head read
 * before, or below a cursor: the explorer or RPC restarted on an older chain, or the wrong
 * network). A head that went backwards stays a condition until it is back where it was.
 */
export function createHeadTracker(thresholds: OperationalConfig, startedAtMs: number): HeadTracker {
  let failingSince: number | undefined;
  let lastBlock: number | null = null;
  let movedAt = startedAtMs;
  let highest: number | null = null;
  return {
    observe(state, highestCursor, nowMs) {
      const conditions: OperationalCondition[] = [];
      if (state.error !== null) failingSince ??= state.read_at === null ? nowMs : Date.parse(state.read_at);
      else if (state.read_at !== null) failingSince = undefined;
      if (failingSince !== undefined && nowMs - failingSince >= thresholds.source_failing_after) {
        conditions.push({ key: "head_unreachable", kind: "head_unreachable", summary: `the chain head was unreachable at the last read (${state.read_at ?? "none yet"}) and has been for ${Math.round((nowMs - failingSince) / 1000)} s: ${state.error ?? ""}`, detail: { since: new Date(failingSince).toISOString(), error: state.error } });
      }
      if (state.block !== null) {
        if (state.block !== lastBlock) {
          lastBlock = state.block;
          movedAt = nowMs;
        }
        if (highest === null || state.block > highest) highest = state.block;
      }
      if (lastBlock !== null && failingSince === undefined && nowMs - movedAt >= thresholds.head_stuck_after) {
        conditions.push({ key: "head_stuck", kind: "head_stuck", summary: `the chain head has not moved from block ${lastBlock} for ${Math.round((nowMs - movedAt) / 1000)} s`, detail: { head: lastBlock, since: new Date(movedAt).toISOString() } });
      }
      const expected = Math.max(highest ?? -1, highestCursor ?? -1);
      if (lastBlock !== null && lastBlock < expected) {
        conditions.push({ key: "head_backwards", kind: "head_backwards", summary: `the chain head (${lastBlock}) is ${expected - lastBlock} blocks below where kaiawatch was (${expected}): explorer or RPC restarted, or the wrong network`, detail: { head: lastBlock, expected } });
      }
      return conditions;
    },
  };
}

/** What the checks read of one sink. */
export interface SinkReading {
  name: string;
  pending: number;
  /** The oldest pending entry, if any. */
  oldest: Pick<OutboxEntry, "created_at"> | undefined;
}

export interface ConditionInputs {
  nowMs: number;
  sources: readonly SourceHealth[];
  /** Each source's last error text, by key (the count check's typed error is recognised by its code). */
  lastErrors: ReadonlyMap<string, string | null>;
  sinks: readonly SinkReading[];
  deadLetters: number;
  store: Pick<StoreStats, "lastWriteFailed" | "failedWrites">;
  storePath: string;
  budgetPausedUntil: string | null;
}

/** The conditions holding now, other than the head's (see createHeadTracker). */
export function currentConditions(thresholds: OperationalConfig, input: ConditionInputs): OperationalCondition[] {
  const out: OperationalCondition[] = [];
  for (const source of input.sources) {
    if (source.state === "failing") out.push({ key: `source_failing:${source.key}`, kind: "source_failing", summary: `source ${source.watch} (${source.key}) is failing: ${source.detail}`, detail: { source: source.key, watch: source.watch, since: source.failing_since, error: input.lastErrors.get(source.key) ?? null } });
    if (source.state === "stalled") out.push({ key: `source_stalled:${source.key}`, kind: "source_stalled", summary: `source ${source.watch} (${source.key}) is stalled: ${source.detail}`, detail: { source: source.key, watch: source.watch } });
    if (source.lag !== null && source.lag > thresholds.source_behind_blocks) out.push({ key: `source_behind:${source.key}`, kind: "source_behind", summary: `source ${source.watch} (${source.key}) is more than ${thresholds.source_behind_blocks} blocks behind the head`, detail: { source: source.key, watch: source.watch, lag: source.lag } });
    // The count check's typed error: the explorer has not indexed the window the head says exists.
    if ((input.lastErrors.get(source.key) ?? "").includes("KW_WATCH_COUNT_MISMATCH")) out.push({ key: `explorer_behind_head:${source.key}`, kind: "explorer_behind_head", summary: `the explorer's records for a window of ${source.watch} (${source.key}) disagree with its own count: it is indexing behind the head`, detail: { source: source.key, watch: source.watch, error: input.lastErrors.get(source.key) } });
  }
  for (const sink of input.sinks) {
    if (sink.oldest === undefined) continue;
    const age = input.nowMs - Date.parse(sink.oldest.created_at);
    if (age > thresholds.sink_pending_age) out.push({ key: `sink_stalled:${sink.name}`, kind: "sink_stalled", summary: `sink ${sink.name}: its oldest pending alert is ${Math.round(age / 1000)} s old (${sink.pending} pending)`, detail: { sink: sink.name, pending: sink.pending, oldest_created_at: sink.oldest.created_at } });
  }
  if (input.deadLetters > 0) out.push({ key: "dead_letters", kind: "dead_letters", summary: `${input.deadLetters} dead letters in the outbox (kaiawatch outbox --state dead)`, detail: { dead: input.deadLetters } });
  if (input.store.lastWriteFailed) out.push({ key: "store_not_writable", kind: "store_not_writable", summary: `the last write of ${input.storePath} failed (${input.store.failedWrites} failed writes since start): the store is not writable; it retries with the next change`, detail: { failed_writes: input.store.failedWrites } });
  if (input.budgetPausedUntil !== null) out.push({ key: "credits_exhausted", kind: "credits_exhausted", summary: `the daily credit budget is spent: polling pauses until ${input.budgetPausedUntil}`, detail: { resumes_at: input.budgetPausedUntil } });
  return out;
}

/**
 * The conditions that need a person now, each with the /readyz check that reports it: /readyz
 * answers 503 while one holds. Dead letters, a source behind the head and the explorer's count
 * disagreeing are alerts only: kaiawatch is working through them (or they are history).
 */
export const READINESS_CHECK_OF: ReadonlyMap<string, string> = new Map([
  ["source_failing", "sources"],
  ["source_stalled", "sources"],
  ["sink_stalled", "sinks"],
  ["head_unreachable", "head"],
  ["head_stuck", "head"],
  ["head_backwards", "head"],
  ["store_not_writable", "store"],
  ["credits_exhausted", "budget"],
]);
