import type { Common } from "../common/common.js";
import type { CreditMeter } from "../explorer/credit-meter.js";
import type { DeadLetterSelector, Dispatcher, RequeueResult } from "../notify/dispatcher.js";
import type { SilenceBook } from "../notify/silences.js";
import type { Cursor, Store } from "../store/types.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import type { WatchEngine } from "../watch/engine.js";
import type { PlannedSource } from "../watch/poller.js";
import { longestIntervalSeconds } from "../watch/schedule-firings.js";
import { createCreditHistory } from "./credit-history.js";
import type { Readiness, StatusProvider } from "./status-server.js";

/**
 * A source is ready once it has finished a tick successfully, and stale (not ready) again
 * when that is older than this many of its schedule's longest intervals, and never sooner
 * than STALE_MIN_MS: a tick may be skipped while a slow one runs, and a failed tick is
 * retried by the next. A tick still running (a long catch-up) counts as alive.
 */
export const STALE_INTERVALS = 3;
export const STALE_MIN_MS = 60_000;
/** Alerts /status lists (newest first), and dead letters at most. */
export const LATEST_ALERTS = 50;
export const DEAD_LETTERS_SHOWN = 200;
/** On-chain text in /status is cut to this many characters: the page shows a line, not a record. */
const TEXT_LIMIT = 500;

/**
 * What status reads of the daemon's head probe: the outcome of the last chain head read.
 * Declared here, as narrow as status needs, so that status depends on no daemon code; the
 * daemon's HeadProbe satisfies it.
 */
export interface HeadReading {
  state(): { block: number | null; read_at: string | null; error: string | null };
}

/** What status reads of the daemon's budget guard (its BudgetGuard satisfies it). */
export interface BudgetReading {
  state(): { budget: number | null; paused_until: string | null; alerts_sent: readonly string[] };
}

export interface DaemonStatusParts {
  sources: readonly PlannedSource[];
  store: Store;
  engine: WatchEngine;
  dispatcher: Dispatcher;
  meter: CreditMeter;
  head: HeadReading;
  budget: BudgetReading;
  /** Active silences (`kaiawatch silence`) with how many alerts each held back. */
  silences?: Pick<SilenceBook, "list">;
  /** PostgreSQL replicas: every live one, with the sources and sinks it holds (absent with the file store). */
  replicas?: () => Promise<ReplicaView[]>;
  /**
   * PostgreSQL replicas: whether this replica holds the source's lease now. Readiness judges
   * only those: another replica ticks the rest, so their ticks here never come.
   */
  holdsSource?: (key: string) => boolean;
  /** The block explorer (config chain.explorer_url): /status carries links under it for the page. */
  explorerUrl?: string;
}

/** A replica as /status shows it. */
export interface ReplicaView {
  id: string;
  started_at: string;
  heartbeat_at: string;
  sources: string[];
  sinks: string[];
}

/** One delivery of an alert as /status shows it. */
interface DeliveryView {
  sink: string;
  entry_id: string;
  state: OutboxEntry["state"];
  attempts: number;
  error: string | null;
}

/** What /readyz, /status and the read-on-scrape gauges of /metrics show of a running daemon. */
export function createDaemonStatus(common: Common, parts: DaemonStatusParts): StatusProvider {
  const { store, engine, dispatcher, meter, head, budget } = parts;
  const startedAt = common.now();
  // Worked out at the first readiness check, once per distinct schedule: an every-second
  // schedule takes ~40 ms to lay out over a week, which start-up should not wait for, and
  // 10,000 sources on one schedule should not pay it 10,000 times.
  const scheduleOf = new Map(parts.sources.map((source) => [source.key, source.schedule]));
  const staleBySchedule = new Map<string, number>();
  const staleAfterMs = (key: string): number => {
    const schedule = scheduleOf.get(key);
    if (schedule === undefined) return Infinity;
    let ms = staleBySchedule.get(schedule);
    if (ms === undefined) {
      const interval = longestIntervalSeconds(schedule, startedAt);
      ms = Number.isFinite(interval) ? Math.max(STALE_MIN_MS, STALE_INTERVALS * interval * 1000) : Infinity;
      staleBySchedule.set(schedule, ms);
    }
    return ms;
  };
  const iso = (ms: number) => new Date(ms).toISOString();
  const creditHistory = createCreditHistory({
    read: () => {
      const spent = meter.spentToday(); // rolls the meter over at midnight first
      return { day: meter.snapshot().day, spent };
    },
    now: common.now,
  });
  creditHistory.start();
  const explorer = parts.explorerUrl?.replace(/\/+$/, "");

  /** Links we build from numbers and hashes we checked, never a URL taken from a record. */
  function linksOf(alert: OutboxEntry["alert"]): { block?: string; transaction?: string } {
    if (explorer === undefined || !/^https?:\/\//i.test(explorer)) return {};
    const links: { block?: string; transaction?: string } = {};
    if (Number.isSafeInteger(alert.block) && alert.block >= 0) links.block = `${explorer}/block/${alert.block}`;
    if (typeof alert.transaction_hash === "string" && /^0x[0-9a-fA-F]{64}$/.test(alert.transaction_hash)) links.transaction = `${explorer}/tx/${alert.transaction_hash}`;
    return links;
  }

  /**
   * The latest alerts in the outbox (every state), newest first, each with its deliveries per
   * sink. An alert's entries are added together, one per sink: reading LATEST_ALERTS times
   * the number of sinks (and some) of the newest entries finds them without reading the rest.
   */
  async function latestAlerts() {
    const sinks = Math.max(1, Object.keys(await dispatcher.states()).length);
    const entries = await store.listOutbox({ newestFirst: true, limit: LATEST_ALERTS * (sinks + 1) });
    const byAlert = new Map<string, { entry: OutboxEntry; deliveries: DeliveryView[] }>();
    for (const entry of entries) {
      const delivery: DeliveryView = { sink: entry.sink, entry_id: entry.id, state: entry.state, attempts: entry.attempts, error: cut(entry.dead_reason ?? entry.last_error ?? null) };
      const known = byAlert.get(entry.alert.id);
      if (known) known.deliveries.push(delivery);
      else if (byAlert.size < LATEST_ALERTS) byAlert.set(entry.alert.id, { entry, deliveries: [delivery] });
    }
    return [...byAlert.values()].map(({ entry, deliveries }) => ({
      id: entry.alert.id,
      rule: entry.alert.rule,
      watch: entry.alert.watch,
      source: entry.alert.source,
      network: entry.alert.network,
      block: entry.alert.block,
      transaction_hash: entry.alert.transaction_hash,
      datetime: entry.alert.datetime,
      created_at: entry.alert.created_at,
      summary: cut(entry.alert.summary),
      links: linksOf(entry.alert),
      deliveries: deliveries.sort((a, b) => a.sink.localeCompare(b.sink)),
    }));
  }

  async function deadLetters() {
    return {
      total: await store.countOutbox({ state: "dead" }),
      shown: (await store.listOutbox({ state: "dead", newestFirst: true, limit: DEAD_LETTERS_SHOWN })).map((entry) => ({
          id: entry.id,
          sink: entry.sink,
          alert_id: entry.alert.id,
          rule: entry.rule,
          block: entry.alert.block,
          summary: cut(entry.alert.summary),
          attempts: entry.attempts,
          reason: cut(entry.dead_reason ?? entry.last_error ?? null),
          created_at: entry.created_at,
          links: linksOf(entry.alert),
        })),
    };
  }

  async function readiness(): Promise<Readiness> {
    const now = common.now();
    const checks: Readiness["checks"] = {};
    const stats = await store.stats();
    // A shared store (PostgreSQL) may be unreachable with no write failing yet: one small read tells.
    const unreachable = await store.countOutbox({ state: "dead" }).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    checks.store =
      unreachable !== undefined
        ? { ok: false, detail: `the store ${store.path} cannot be read: ${unreachable}` }
        : stats.lastWriteFailed
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
      if (parts.holdsSource && !parts.holdsSource(state.key)) continue;
      const limit = staleAfterMs(state.key);
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

  async function refreshMetrics(): Promise<void> {
    const { metrics } = common;
    const h = head.state().block;
    const cursors = await cursorsByKey();
    for (const source of parts.sources) {
      const cursor = cursors.get(source.key);
      if (cursor === undefined) continue;
      const labels = { watch: source.watch, source: source.key };
      metrics.sourceCursor.set(labels, cursor.block);
      if (h !== null) metrics.sourceLag.set(labels, Math.max(0, h - cursor.block));
    }
    for (const state of engine.states()) {
      if (state.last_tick_seconds !== null) metrics.sourceLastTickDuration.set({ watch: state.watch, source: state.key }, state.last_tick_seconds);
    }
    metrics.storeSize.set((await store.stats()).bytes);
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

  /** Every cursor in one read (one query on PostgreSQL, not one per source). */
  async function cursorsByKey(): Promise<Map<string, Cursor>> {
    return new Map((await store.listCursors()).map((cursor) => [cursor.key, cursor]));
  }

  async function status(): Promise<unknown> {
    const now = common.now();
    const h = head.state();
    const states = new Map(engine.states().map((state) => [state.key, state]));
    const cursors = await cursorsByKey();
    const sources = parts.sources.map((source) => {
      const state = states.get(source.key);
      const cursor = cursors.get(source.key)?.block ?? null;
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
        last_tick_seconds: state?.last_tick_seconds ?? null,
        ticks: state?.ticks ?? 0,
        skipped: state?.skipped ?? 0,
      };
    });
    creditHistory.sample();
    const meterState = meter.snapshot();
    const stats = await store.stats();
    const dead = await deadLetters();
    const b = budget.state();
    const ready = await readiness();
    return {
      now: iso(now),
      started_at: iso(startedAt),
      uptime_seconds: Math.round((now - startedAt) / 1000),
      ready: ready.ready,
      reasons: ready.reasons,
      head: h,
      sources,
      explorer_url: explorer ?? null,
      sinks: await dispatcher.states(),
      ...(parts.replicas ? { replicas: await parts.replicas() } : {}),
      alerts: await latestAlerts(),
      dead_letters: dead.shown,
      dead_letters_total: dead.total,
      silences: parts.silences?.list(now) ?? [],
      credits: {
        day: meterState.day,
        spent_today: meterState.spent,
        budget: b.budget,
        remaining_today: b.budget === null ? null : Math.max(0, b.budget - meterState.spent),
        by_operation: meterState.byOperation,
        history: creditHistory.today(),
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

  function requeueDeadLetters(selector: DeadLetterSelector): Promise<RequeueResult> {
    return dispatcher.retry(selector);
  }

  return { readiness, status, refreshMetrics, requeueDeadLetters, close: () => creditHistory.stop() };
}

function cut(text: string): string;
function cut(text: string | null): string | null;
function cut(text: string | null): string | null {
  if (text === null || text.length <= TEXT_LIMIT) return text;
  return `${text.slice(0, TEXT_LIMIT)}…`;
}
