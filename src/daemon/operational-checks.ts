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
  /**
   * A head condition firing before a restart (a persisted episode: its kind, start and detail),
   * so that the restart neither resolves it before the first read nor starts its clock again:
   * unreachable and stuck keep their start, backwards its heads until a read says otherwise.
   */
  seed(kind: string, sinceMs: number, detail: Record<string, unknown>): void;
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
  // The newest head reading observed: an older one (observed late, by an evaluation that
  // waited on the store) is discarded, or a head read before the wait looked like a head
  // that went backwards.
  let newestReadAt = -Infinity;
  return {
    seed(kind, sinceMs, detail) {
      const head = typeof detail.head === "number" ? detail.head : null;
      if (kind === "head_unreachable") failingSince = sinceMs - thresholds.source_failing_after;
      if (kind === "head_stuck" && head !== null) {
        lastBlock = head;
        movedAt = sinceMs - thresholds.head_stuck_after;
      }
      if (kind === "head_backwards" && head !== null && typeof detail.expected === "number") {
        lastBlock ??= head;
        highest = Math.max(highest ?? -1, detail.expected);
      }
    },
    observe(state, highestCursor, nowMs) {
      const conditions: OperationalCondition[] = [];
      const readAt = state.read_at === null ? null : Date.parse(state.read_at);
      if (readAt !== null && readAt < newestReadAt) state = { block: lastBlock, read_at: null, error: null };
      else if (readAt !== null) newestReadAt = readAt;
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
  /** Sinks the config no longer has (a reload removed them) with alerts still pending for them. */
  removedSinks?: ReadonlyArray<{ name: string; pending: number }>;
  deadLetters: number;
  store: Pick<StoreStats, "lastWriteFailed" | "failedWrites" | "corrupt">;
  storePath: string;
  budget: BudgetReading;
  /** The last chain head read's error (null or absent: it succeeded, or none yet). */
  headError?: string | null;
}

/**
 * The error codes that mean a service refuses the credentials of a setting (HTTP 401 or 403):
 * not transient (every request gets the same answer until the setting changes), so they are a
 * condition at the first such answer (`credentials_refused`), not after `source_failing_after`.
 */
export const REFUSED_CREDENTIALS: ReadonlyArray<{ code: string; setting: string; service: string }> = [
  { code: "KW_EXPLORER_KEY_REFUSED", setting: "explorer.api_key", service: "the explorer" },
  { code: "KW_EXPLORER_PLAN", setting: "explorer.api_key", service: "the explorer" },
  { code: "KW_RPC_REFUSED", setting: "chain.rpc_url", service: "the node" },
];

/** One `credentials_refused` condition per setting refused at the last tick of a source or the last head read. */
function refusedCredentials(sources: readonly SourceHealth[], lastErrors: ReadonlyMap<string, string | null>, headError: string | null | undefined): OperationalCondition[] {
  const out: OperationalCondition[] = [];
  for (const setting of new Set(REFUSED_CREDENTIALS.map((refusal) => refusal.setting))) {
    const codes = REFUSED_CREDENTIALS.filter((refusal) => refusal.setting === setting);
    const refusedBy = (error: string | null | undefined) => error != null && codes.some((refusal) => error.includes(refusal.code));
    const refusedSources = sources.filter((source) => refusedBy(lastErrors.get(source.key)));
    const headRefused = refusedBy(headError);
    if (refusedSources.length === 0 && !headRefused) continue;
    const error = headRefused ? headError! : lastErrors.get(refusedSources[0]!.key)!;
    const who = [...(headRefused ? ["the chain head"] : []), ...(refusedSources.length > 0 ? [`${refusedSources.length} source${refusedSources.length === 1 ? "" : "s"} (${refusedSources[0]!.watch}${refusedSources.length > 1 ? ", …" : ""})`] : [])].join(" and ");
    out.push({
      key: `credentials_refused:${setting}`,
      kind: "credentials_refused",
      summary: `${codes[0]!.service} refuses ${setting}: ${who} cannot be read until it is changed (not retried away: every request gets this answer): ${error}`,
      detail: { setting, sources: refusedSources.map((source) => source.key), head: headRefused, error },
    });
  }
  return out;
}

/** What the checks read of the daily credit budget (the budget guard's state). */
export interface BudgetReading {
  /** The daily budget; null without one. */
  budget: number | null;
  /** Credits spent today (UTC), by every replica. */
  spent_today: number;
  /** When polling resumes, while paused. */
  paused_until: string | null;
  /** The explorer's daily quota, while its answers say it is spent. */
  quota: { limit: number | null; since: string; retry_at: string } | null;
}

/** The share of the daily credit budget at which `credits_low` starts. */
export const CREDITS_LOW_SHARE = 0.8;

const nextMidnightUtc = (nowMs: number): string => new Date((Math.floor(nowMs / 86_400_000) + 1) * 86_400_000).toISOString();

/** The conditions that are about one source (their key is `<kind>:<source key>`). */
export const SOURCE_CONDITION_KINDS: ReadonlySet<string> = new Set(["source_failing", "source_stalled", "source_behind", "explorer_behind_head", "explorer_shape_changed"]);

/** The source a source condition's key names (`source_failing:src_…` → `src_…`), or undefined for any other condition. */
export function sourceOfCondition(condition: { key: string; kind: string }): string | undefined {
  return SOURCE_CONDITION_KINDS.has(condition.kind) && condition.key.startsWith(`${condition.kind}:`) ? condition.key.slice(condition.kind.length + 1) : undefined;
}

/** The conditions of some sources' states (SOURCE_CONDITION_KINDS): what a replica judges of the sources it holds. */
export function sourceConditions(thresholds: Pick<OperationalConfig, "source_behind_blocks">, sources: readonly SourceHealth[], lastErrors: ReadonlyMap<string, string | null>): OperationalCondition[] {
  const out: OperationalCondition[] = [];
  for (const source of sources) {
    if (source.state === "failing") out.push({ key: `source_failing:${source.key}`, kind: "source_failing", summary: `source ${source.watch} (${source.key}) is failing: ${source.detail}`, detail: { source: source.key, watch: source.watch, since: source.failing_since, error: lastErrors.get(source.key) ?? null } });
    if (source.state === "stalled") out.push({ key: `source_stalled:${source.key}`, kind: "source_stalled", summary: `source ${source.watch} (${source.key}) is stalled: ${source.detail}`, detail: { source: source.key, watch: source.watch } });
    if (source.lag !== null && source.lag > thresholds.source_behind_blocks) out.push({ key: `source_behind:${source.key}`, kind: "source_behind", summary: `source ${source.watch} (${source.key}) is more than ${thresholds.source_behind_blocks} blocks behind the head`, detail: { source: source.key, watch: source.watch, lag: source.lag } });
    // The count check's typed error: the explorer has not indexed the window the head says exists.
    // The boundary's typed error: a field kaiawatch reads is missing or malformed. It holds
    // while the source's ticks keep failing on it, and its text names the operation, the
    // field and a few redacted characters of the value.
    const error = lastErrors.get(source.key) ?? "";
    if (error.startsWith("KW_EXPLORER_SHAPE_CHANGED")) out.push({ key: `explorer_shape_changed:${source.key}`, kind: "explorer_shape_changed", summary: `the explorer's answers for ${source.watch} (${source.key}) changed shape; the source stops at its cursor until they can be read: ${error}`, detail: { source: source.key, watch: source.watch, error } });
    if ((lastErrors.get(source.key) ?? "").includes("KW_WATCH_COUNT_MISMATCH")) out.push({ key: `explorer_behind_head:${source.key}`, kind: "explorer_behind_head", summary: `the explorer's records for a window of ${source.watch} (${source.key}) disagree with its own count: it is indexing behind the head`, detail: { source: source.key, watch: source.watch, error: lastErrors.get(source.key) } });
  }
  return out;
}

/** The conditions holding now, other than the head's (see createHeadTracker). */
export function currentConditions(thresholds: OperationalConfig, input: ConditionInputs): OperationalCondition[] {
  const out = sourceConditions(thresholds, input.sources, input.lastErrors);
  out.push(...refusedCredentials(input.sources, input.lastErrors, input.headError));
  for (const sink of input.sinks) {
    if (sink.oldest === undefined) continue;
    const age = input.nowMs - Date.parse(sink.oldest.created_at);
    if (age > thresholds.sink_pending_age) out.push({ key: `sink_stalled:${sink.name}`, kind: "sink_stalled", summary: `sink ${sink.name}: its oldest pending alert is ${Math.round(age / 1000)} s old (${sink.pending} pending)`, detail: { sink: sink.name, pending: sink.pending, oldest_created_at: sink.oldest.created_at } });
  }
  for (const sink of input.removedSinks ?? []) {
    out.push({
      key: `sink_removed_pending:${sink.name}`,
      kind: "sink_removed_pending",
      summary: `${sink.pending} alert${sink.pending === 1 ? "" : "s"} pending for sink ${sink.name}, which the config no longer has: kept in the outbox, and sent once a sink named ${sink.name} is configured again (kaiawatch outbox --sink ${sink.name} lists them)`,
      detail: { sink: sink.name, pending: sink.pending },
    });
  }
  if (input.deadLetters > 0) out.push({ key: "dead_letters", kind: "dead_letters", summary: `${input.deadLetters} dead letters in the outbox (kaiawatch outbox --state dead)`, detail: { dead: input.deadLetters } });
  // Damage found while running: writes stopped for good (the outbox is in the damaged file: the monitor sends this alert directly, OUTBOX_CANNOT_CARRY).
  if (input.store.corrupt !== undefined) out.push({ key: "store_corrupt", kind: "store_corrupt", summary: input.store.corrupt, detail: { path: input.storePath } });
  else if (input.store.lastWriteFailed) out.push({ key: "store_not_writable", kind: "store_not_writable", summary: `the last write of ${input.storePath} failed (${input.store.failedWrites} failed writes since start): the store is not writable, and deliveries wait until it is (an outcome it cannot record would send the same alerts again); it retries with the next change`, detail: { failed_writes: input.store.failedWrites } });
  // Both hold until the UTC day turns (the meter starts the new day at 0 and the pause ends):
  // each is sent once when it starts and resolved once at 00:00 UTC, whatever restarts happen.
  const { budget } = input;
  if (budget.budget !== null && budget.spent_today >= CREDITS_LOW_SHARE * budget.budget) {
    out.push({ key: "credits_low", kind: "credits_low", summary: `${Math.round(CREDITS_LOW_SHARE * 100)}% of the daily credit budget is spent (${budget.spent_today} of ${budget.budget} credits today, UTC)`, detail: { spent: budget.spent_today, budget: budget.budget, resets_at: nextMidnightUtc(input.nowMs) } });
  }
  if (budget.quota !== null) {
    const allowance = budget.quota.limit === null ? "" : ` (${budget.quota.limit} a day)`;
    out.push({ key: "credits_exhausted", kind: "credits_exhausted", summary: `the explorer's daily quota for this key${allowance} is spent (HTTP 429 type:requestPerDay since ${budget.quota.since}): no request until it resets; kaiawatch asks again at ${budget.quota.retry_at}, then catches up`, detail: { quota: budget.quota.limit, since: budget.quota.since, retry_at: budget.quota.retry_at } });
  } else if (budget.paused_until !== null) out.push({ key: "credits_exhausted", kind: "credits_exhausted", summary: `the daily credit budget is spent (${budget.spent_today} of ${budget.budget ?? "?"} credits today, UTC): polling pauses until ${budget.paused_until}, then catches up`, detail: { spent: budget.spent_today, budget: budget.budget, resumes_at: budget.paused_until } });
  return out;
}

/**
 * A sink whose backlog grows: its pending count is at least `sink_backlog_growth` higher than
 * it was `sink_backlog_window` ago (alerts arrive faster than the sink takes them, e.g. a chat
 * sink at its rate limit). It holds, once started, until the backlog stops growing: the count
 * is no higher than `sink_backlog_window` ago, or nothing is pending. Growth starts it and
 * only no growth ends it, so a count wobbling around the threshold does not flap.
 */
export interface BacklogTracker {
  observe(sinks: readonly Pick<SinkReading, "name" | "pending">[], nowMs: number): OperationalCondition[];
  /** A sink known to be growing before a restart (a persisted episode): it stays so until a verdict says otherwise. */
  seedGrowing(sink: string): void;
}

/** Samples closer together than this are not kept: /readyz may evaluate many times a second. */
const BACKLOG_SAMPLE_MS = 1_000;

export function createBacklogTracker(thresholds: Pick<OperationalConfig, "sink_backlog_window" | "sink_backlog_growth">): BacklogTracker {
  const samples = new Map<string, Array<{ at: number; pending: number }>>();
  const growing = new Set<string>();
  return {
    seedGrowing: (sink) => void growing.add(sink),
    observe(sinks, nowMs) {
      const out: OperationalCondition[] = [];
      for (const sink of sinks) {
        let list = samples.get(sink.name);
        if (list === undefined) samples.set(sink.name, (list = []));
        const last = list.at(-1);
        if (last === undefined || nowMs - last.at >= BACKLOG_SAMPLE_MS) list.push({ at: nowMs, pending: sink.pending });
        // The baseline: the newest sample at least a window old; older ones are no longer needed.
        const cutoff = nowMs - thresholds.sink_backlog_window;
        while (list.length > 1 && list[1]!.at <= cutoff) list.shift();
        const baseline = list[0]!.at <= cutoff ? list[0] : undefined;
        if (sink.pending === 0) growing.delete(sink.name);
        else if (baseline !== undefined) {
          const growth = sink.pending - baseline.pending;
          if (growth >= thresholds.sink_backlog_growth) growing.add(sink.name);
          else if (growth <= 0) growing.delete(sink.name);
        }
        if (!growing.has(sink.name)) continue;
        const windowSeconds = Math.round(thresholds.sink_backlog_window / 1000);
        out.push({
          key: `sink_backlog_growing:${sink.name}`,
          kind: "sink_backlog_growing",
          summary: `sink ${sink.name}: its backlog grows faster than it delivers (${sink.pending} pending${baseline !== undefined ? `, ${baseline.pending} ${windowSeconds} s ago` : ""})`,
          detail: { sink: sink.name, pending: sink.pending, pending_before: baseline?.pending ?? null, window_seconds: windowSeconds },
        });
      }
      return out;
    },
  };
}

/**
 * Conditions /readyz says in a check's detail without failing it: kaiawatch is doing what it
 * should (the alerts of a removed sink are kept), but a person may want to act.
 */
export const READINESS_NOTE_OF: ReadonlyMap<string, string> = new Map([["sink_removed_pending", "sinks"]]);

/**
 * The conditions that need a person now, each with the /readyz check that reports it: /readyz
 * answers 503 while one holds. Dead letters, a source behind the head, the explorer's count
 * disagreeing, a growing backlog and credits running low are alerts only: kaiawatch is
 * working through them (or they are history).
 */
export const READINESS_CHECK_OF: ReadonlyMap<string, string> = new Map([
  ["source_failing", "sources"],
  ["source_stalled", "sources"],
  ["sink_stalled", "sinks"],
  ["credentials_refused", "credentials"],
  ["head_unreachable", "head"],
  ["head_stuck", "head"],
  ["head_backwards", "head"],
  ["store_not_writable", "store"],
  ["store_corrupt", "store"],
  ["credits_exhausted", "budget"],
]);

/** What /readyz makes of some conditions: the problems that fail a check, and the notes said in one's detail. */
export function readinessOf(conditions: readonly OperationalCondition[]): { problems: Array<{ check: string; kind: string; summary: string }>; notes: Array<{ check: string; summary: string }> } {
  const problems = conditions.flatMap(({ kind, summary }) => {
    const check = READINESS_CHECK_OF.get(kind);
    return check === undefined ? [] : [{ check, kind, summary }];
  });
  const notes = conditions.flatMap(({ kind, summary }) => {
    const check = READINESS_NOTE_OF.get(kind);
    return check === undefined ? [] : [{ check, summary }];
  });
  return { problems, notes };
}
