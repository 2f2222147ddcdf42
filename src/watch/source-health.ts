import type { SourceState } from "./engine.js";

/**
 * What a source needs from a person, worst last:
 * - ok: its last tick succeeded and it is within `behind_blocks` of the head;
 * - starting: no tick of it has succeeded yet (since the start, or since this replica took
 *   it), and none failed: it is not called ok before it was read;
 * - catching_up: its last tick succeeded but it is more than `behind_blocks` behind the head;
 * - retrying: its ticks have failed for less than `failing_after` (the next tick retries);
 * - failing: its ticks have failed for `failing_after` or longer;
 * - stalled: it has not finished a successful tick for longer than its stale limit and is not
 *   failing (no ticks at all: a hung tick, the budget pause, a stopped schedule).
 */
export type SourceHealthState = "ok" | "starting" | "catching_up" | "retrying" | "failing" | "stalled";

export const SOURCE_HEALTH_ORDER: readonly SourceHealthState[] = ["ok", "starting", "catching_up", "retrying", "failing", "stalled"];

/** The states that need a person: /readyz answers 503 while a source is in one of them. */
export const NEEDS_A_PERSON: ReadonlySet<SourceHealthState> = new Set(["failing", "stalled"]);

export interface SourceHealth {
  key: string;
  watch: string;
  state: SourceHealthState;
  /** When the current failure streak began (retrying and failing), ISO-8601. */
  failing_since: string | null;
  /** Blocks between the cursor and the head, when both are known. */
  lag: number | null;
  detail: string;
}

export interface SourceHealthOptions {
  /** A failure streak this long turns retrying into failing. */
  failingAfterMs: number;
  /** More than this many blocks behind the head is catching up. */
  behindBlocks: number;
  /** No successful tick for longer than this (per source) is stalled. */
  stalledAfterMs: (key: string) => number;
  /** When the daemon started: a source that never ticked is measured from here. */
  startedAtMs: number;
  /**
   * With replicas: since when this replica holds each source (undefined: always). A source is
   * judged from then: what its ticks did here before (it was held, lost, and taken back) is
   * forgotten, and one not ticked since is measured from then, not from the start.
   */
  heldSinceMs?: (key: string) => number | undefined;
}

export interface SourceHealthTracker {
  /** Each source's state now; call as often as wanted (every /readyz): it only remembers when streaks began. */
  observe(states: readonly SourceState[], head: number | null, nowMs: number): SourceHealth[];
  /** A failure streak known from before a restart (a persisted failing episode), so a restart does not reset it to retrying. */
  seedStreak(key: string, sinceMs: number): void;
}

/**
 * Per-source states with hysteresis, so that one probe does not flip on every retry: a failed
 * tick makes a source `retrying`, and only a failure streak of `failingAfterMs` (no success in
 * between) makes it `failing`; ONE successful tick ends the streak and makes it ok (or catching
 * up). A tick still running does not end a streak: the 5xx storm that makes a tick retry for
 * minutes keeps the source retrying, then failing, rather than alternating with "alive".
 */
export function createSourceHealthTracker(options: SourceHealthOptions): SourceHealthTracker {
  const streakStart = new Map<string, number>();
  return {
    seedStreak(key, sinceMs) {
      streakStart.set(key, sinceMs);
    },
    observe(observed, head, nowMs) {
      return observed.map((seen) => {
        const heldSince = options.heldSinceMs?.(seen.key);
        // Not ticked here since this replica took the source (back): nothing of it is known yet.
        const fresh = heldSince !== undefined && (seen.last_tick_at === null || Date.parse(seen.last_tick_at) < heldSince);
        if (fresh) streakStart.delete(seen.key);
        const state: SourceState = fresh ? { ...seen, last_outcome: null, last_ok_at: null, last_error: null, last_tick_at: null, cursor: null } : seen;
        const lag = state.cursor !== null && head !== null ? Math.max(0, head - state.cursor) : null;
        const lastOk = state.last_ok_at === null ? null : Date.parse(state.last_ok_at);
        const lastTick = state.last_tick_at === null ? nowMs : Date.parse(state.last_tick_at);
        if (state.last_outcome === "error") {
          // The streak began when the first failed tick after the last success ended.
          if (!streakStart.has(state.key)) streakStart.set(state.key, Math.min(lastTick, nowMs));
        } else if (state.last_outcome === "ok") streakStart.delete(state.key);
        const since = streakStart.get(state.key);
        const base = { key: state.key, watch: state.watch, lag };
        if (since !== undefined) {
          const failingFor = nowMs - since;
          const failing = failingFor >= options.failingAfterMs;
          return {
            ...base,
            state: failing ? "failing" : "retrying",
            failing_since: new Date(since).toISOString(),
            detail: `ticks failing for ${Math.round(failingFor / 1000)} s${failing ? "" : ` (failing after ${Math.round(options.failingAfterMs / 1000)} s)`}: ${state.last_error ?? "unknown error"}`,
          } satisfies SourceHealth;
        }
        const okAge = nowMs - Math.max(lastOk ?? options.startedAtMs, heldSince ?? -Infinity);
        if (okAge > options.stalledAfterMs(state.key) && !state.running) {
          const what =
            lastOk === null ? (heldSince === undefined ? "no successful tick since start" : `no successful tick since this replica took it at ${new Date(heldSince).toISOString()}`) : `no successful tick since ${state.last_ok_at}`;
          return { ...base, state: "stalled", failing_since: null, detail: `${what}${state.last_outcome === "paused" ? " (the daily credit budget is spent)" : ""}` } satisfies SourceHealth;
        }
        if (lastOk === null) {
          const detail = state.last_outcome === "paused" ? "not read yet: the daily credit budget is spent" : state.running ? "first tick running" : "first tick pending";
          return { ...base, state: "starting", failing_since: null, detail } satisfies SourceHealth;
        }
        if (lag !== null && lag > options.behindBlocks) {
          return { ...base, state: "catching_up", failing_since: null, detail: `${lag} blocks behind the head (more than ${options.behindBlocks})` } satisfies SourceHealth;
        }
        return { ...base, state: "ok", failing_since: null, detail: `last successful tick ${state.last_ok_at}` } satisfies SourceHealth;
      });
    },
  };
}

/** The worst of some states (ok for none): the page's badge. */
export function worstState(states: readonly SourceHealthState[]): SourceHealthState {
  let worst = 0;
  for (const state of states) worst = Math.max(worst, SOURCE_HEALTH_ORDER.indexOf(state));
  return SOURCE_HEALTH_ORDER[worst]!;
}
