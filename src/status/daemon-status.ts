import type { Common } from "../common/common.js";
import type { BudgetGuard } from "../daemon/budget-guard.js";
import type { HeadProbe } from "../daemon/head-probe.js";
import type { CreditMeter } from "../explorer/credit-meter.js";
import type { Dispatcher } from "../notify/dispatcher.js";
import type { SilenceBook } from "../notify/silences.js";
import type { Store } from "../store/types.js";
import type { WatchEngine } from "../watch/engine.js";
import type { PlannedSource } from "../watch/poller.js";
import { longestIntervalSeconds } from "../watch/schedule-firings.js";
import type { Readiness, StatusProvider } from "./status-server.js";

/**
 * A source is ready once it has finished a tick successfully, and stale (not ready) again
 * when that is older than this many of its schedule's longest intervals, and never sooner
 * than STALE_MIN_MS: a tick may be skipped while a slow one runs, and a failed tick is
 * retried by the next. A tick still running (a long catch-up) counts as alive.
 */
export const STALE_INTERVALS = 3;
export const STALE_MIN_MS = 60_000;

export interface DaemonStatusParts {
  sources: readonly PlannedSource[];
  store: Store;
  engine: WatchEngine;
  dispatcher: Dispatcher;
  meter: CreditMeter;
  head: HeadProbe;
  budget: BudgetGuard;
  /** Active silences (`kaiawatch silence`) with how many alerts each held back. */
  silences?: Pick<SilenceBook, "list">;
}

/** What /readyz, /status and the read-on-scrape gauges of /metrics show of a running daemon. */
export function createDaemonStatus(common: Common, parts: DaemonStatusParts): StatusProvider {
  const { store, engine, dispatcher, meter, head, budget } = parts;
  const startedAt = common.now();
  const staleAfterMs = new Map<string, number>();
  for (const source of parts.sources) {
    const interval = longestIntervalSeconds(source.schedule, startedAt);
    staleAfterMs.set(source.key, Number.isFinite(interval) ? Math.max(STALE_MIN_MS, STALE_INTERVALS * interval * 1000) : Infinity);
  }
  const iso = (ms: number) => new Date(ms).toISOString();

  function readiness(): Readiness {
    const now = common.now();
    const checks: Readiness["checks"] = {};
    const stats = store.stats();
    checks.store = stats.lastWriteFailed
      ? { ok: false, detail: `the last write of ${store.path} failed (${stats.failedWrites} failed writes since start); the store retries with the next change` }
      : { ok: true, detail: `${store.path} is writable (${stats.writes} writes since start)` };

    const h = head.state();
    checks.head =
      h.read_at === null
        ? { ok: false, detail: "the chain head has not been read yet (the first tick reads it)" }
        : h.error !== null
          ? { ok: false, detail: `the chain head was unreachable at the last read (${h.read_at}): ${h.error}` }
          : { ok: true, detail: `head ${h.block} read at ${h.read_at}` };

    const stale: string[] = [];
    for (const state of engine.states()) {
      const limit = staleAfterMs.get(state.key) ?? Infinity;
      // A running tick (a long catch-up) counts as alive; a source that never succeeded is not ready yet.
      if (state.running || (state.last_ok_at !== null && now - Date.parse(state.last_ok_at) <= limit)) continue;
      const what = state.last_ok_at === null ? "no successful tick yet" : `no successful tick since ${state.last_ok_at}`;
      stale.push(`${state.watch} (${state.key}): ${what}${state.last_error ? `; last error: ${state.last_error}` : ""}`);
    }
    checks.ticks =
      stale.length === 0
        ? { ok: true, detail: `every source ticked successfully within ${STALE_INTERVALS}× its schedule's longest interval (at least ${STALE_MIN_MS / 1000} s)` }
        : { ok: false, detail: `stale sources: ${stale.join(" | ")}` };

    const b = budget.state();
    checks.budget =
      b.paused_until !== null
        ? { ok: false, detail: `polling is paused: the daily credit budget (${b.budget}) is spent; it resumes at ${b.paused_until}` }
        : { ok: true, detail: b.budget === null ? "no daily credit budget" : `${meter.spentToday()} of ${b.budget} credits spent today` };

    const reasons = Object.entries(checks)
      .filter(([, check]) => !check.ok)
      .map(([name, check]) => `${name}: ${check.detail}`);
    return { ready: reasons.length === 0, reasons, checks };
  }

  function refreshMetrics(): void {
    const { metrics } = common;
    const h = head.state().block;
    for (const source of parts.sources) {
      const cursor = store.getCursor(source.key);
      if (cursor === undefined) continue;
      const labels = { watch: source.watch, source: source.key };
      metrics.sourceCursor.set(labels, cursor.block);
      if (h !== null) metrics.sourceLag.set(labels, Math.max(0, h - cursor.block));
    }
    metrics.storeSize.set(store.stats().bytes);
    // Reading the meter rolls it over at midnight even when nothing is being spent.
    metrics.explorerCreditsToday.set(meter.spentToday());
  }

  async function countsOf(metric: { get(): Promise<{ values: Array<{ labels: Record<string, string | number | undefined>; value: number }> }> }, ...keys: string[]) {
    const out: Record<string, unknown> = {};
    for (const { labels, value } of (await metric.get()).values) {
      let node = out;
      keys.forEach((key, i) => {
        const label = String(labels[key] ?? "");
        if (i === keys.length - 1) node[label] = value;
        else node = (node[label] ??= {}) as Record<string, unknown>;
      });
    }
    return out;
  }

  async function status(): Promise<unknown> {
    const now = common.now();
    const h = head.state();
    const states = new Map(engine.states().map((state) => [state.key, state]));
    const sources = parts.sources.map((source) => {
      const state = states.get(source.key);
      const cursor = store.getCursor(source.key)?.block ?? null;
      return {
        key: source.key,
        watch: source.watch,
        description: source.description,
        family: source.family,
        schedule: source.schedule,
        cursor,
        lag: cursor !== null && h.block !== null ? Math.max(0, h.block - cursor) : null,
        running: state?.running ?? false,
        last_tick_at: state?.last_tick_at ?? null,
        last_ok_at: state?.last_ok_at ?? null,
        last_outcome: state?.last_outcome ?? null,
        last_error: state?.last_error ?? null,
        ticks: state?.ticks ?? 0,
        skipped: state?.skipped ?? 0,
      };
    });
    const credits = meter.snapshot();
    const stats = store.stats();
    const b = budget.state();
    const ready = readiness();
    return {
      now: iso(now),
      started_at: iso(startedAt),
      uptime_seconds: Math.round((now - startedAt) / 1000),
      ready: ready.ready,
      reasons: ready.reasons,
      head: h,
      sources,
      sinks: dispatcher.states(),
      silences: parts.silences?.list(now) ?? [],
      credits: {
        day: credits.day,
        spent_today: credits.spent,
        budget: b.budget,
        remaining_today: b.budget === null ? null : Math.max(0, b.budget - credits.spent),
        by_operation: credits.byOperation,
        paused_until: b.paused_until,
        alerts_sent: b.alerts_sent,
      },
      requests: await countsOf(common.metrics.explorerRequests, "operation", "status"),
      retries: await countsOf(common.metrics.explorerRetries, "operation"),
      store: {
        path: store.path,
        bytes: stats.bytes,
        writes: stats.writes,
        failed_writes: stats.failedWrites,
        last_write_failed: stats.lastWriteFailed,
        cursors: stats.cursors,
        outbox: stats.outbox,
      },
    };
  }

  return { readiness, status, refreshMetrics };
}
