import type { Common } from "../common/common.js";
import type { CreditMeter } from "../explorer/credit-meter.js";
import type { Dispatcher } from "../notify/dispatcher.js";
import type { SilenceBook } from "../notify/silences.js";
import type { Inhibitor } from "../notify/inhibitor.js";
import type { Store } from "../store/types.js";
import type { WatchEngine } from "../watch/engine.js";
import type { PlannedSource } from "../watch/poller.js";
import { createCreditHistory } from "./credit-history.js";
import { createReadiness } from "./readiness.js";
import { answerWithin } from "./answer-within.js";
import { isStoreUnavailable } from "../store/errors.js";
import { otherRole } from "../model/witness-role.js";
import { createAlertViews } from "./alert-views.js";
import { createDaemonWrites } from "./daemon-writes.js";
import { holdersOf, sourceViews } from "./source-views.js";
import { countsOf, createMetricsRefresh, cursorsByKey } from "./status-metrics.js";
import { unansweredStatus } from "./unanswered-status.js";
import type { Readiness, StatusProvider } from "./status-server.js";

/**
 * /readyz, /status and /metrics answer within this long whatever the store does: past it from
 * what they last read, saying the store is not answering (a probe's timeout is often 1–2 s).
 */
export const HEALTH_ANSWER_MS = 1_000;

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
  state(): { budget: number | null; paused_until: string | null };
}

/**
 * What status reads of the daemon's health monitor (its HealthMonitor satisfies it): each
 * source's state with hysteresis, and the conditions that need a person.
 */
export interface HealthReading {
  evaluate(): Promise<{
    worst: string;
    sources: Array<{ key: string; state: string; failing_since: string | null; detail: string }>;
    conditions: Array<{ key: string; kind: string; summary: string }>;
    problems: Array<{ check: string; kind: string; summary: string }>;
  }>;
}

export interface DaemonStatusParts {
  sources: readonly PlannedSource[];
  store: Store;
  engine: WatchEngine;
  dispatcher: Dispatcher;
  meter: CreditMeter;
  head: HeadReading;
  budget: BudgetReading;
  /** Readiness and the sources' states: the health monitor's (states with hysteresis). */
  health: HealthReading;
  /** Active silences (`kaiawatch silence`) with how many alerts each held back; added and removed through the API. */
  silences?: Pick<SilenceBook, "current" | "list" | "add" | "remove">;
  /** `inhibit_rules:` with how many alerts each held back, and the inhibitions in force (sources firing now). */
  inhibitor?: Pick<Inhibitor, "current" | "status">;
  /** PostgreSQL replicas: every live one, with the sources and sinks it holds (absent with the file store). */
  replicas?: () => Promise<ReplicaView[]>;
  /** With replicas: this replica's id (which sources and sinks are held here). */
  replicaId?: string;
  /** The balance watches: who reads each, its last reading, its rules' states (absent: none configured). */
  balances?: () => Promise<unknown[]>;
  /** The block explorer (config chain.explorer_url): /status carries links under it for the page. */
  explorerUrl?: string;
  /** How long /readyz, /status and /metrics wait for the store before answering from what they last read (HEALTH_ANSWER_MS). */
  answerWithinMs?: number;
}

/** A replica as /status shows it. */
export interface ReplicaView {
  id: string;
  started_at: string;
  heartbeat_at: string;
  sources: string[];
  sinks: string[];
  /** The balance watches it reads. */
  balances: string[];
}

/** What /readyz, /status and the read-on-scrape gauges of /metrics show of a running daemon. */
export function createDaemonStatus(common: Common, parts: DaemonStatusParts): StatusProvider {
  const { store, engine, dispatcher, meter, head, budget, health } = parts;
  const startedAt = common.now();
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
  const alertViews = createAlertViews({ store, dispatcher, explorer });

  /** The verdict itself (src/status/readiness.ts), shared with the heartbeat sink; bounded in time below. */
  const readinessNow = createReadiness({ store, health });

  const answerWithinMs = parts.answerWithinMs ?? HEALTH_ANSWER_MS;
  const bounded = { deadlineMs: answerWithinMs, now: common.now, notAnswering: isStoreUnavailable };
  /** The store's check when it did not answer in time: what the endpoints say instead of hanging. */
  const notAnswering = (lastAtMs: number | undefined) =>
    `the store ${store.path} is not answering: no answer within ${answerWithinMs} ms (${lastAtMs === undefined ? "nothing read from it yet" : `the rest as last read at ${iso(lastAtMs)}`})`;
  const readinessReading = answerWithin(readinessNow, bounded);

  async function readiness(): Promise<Readiness> {
    const got = await readinessReading();
    if (got.fresh) return got.value;
    const checks = { ...(got.last?.value.checks ?? {}), store: { ok: false, detail: notAnswering(got.last?.atMs) } };
    const reasons = Object.entries(checks)
      .filter(([, check]) => !check.ok)
      .map(([name, check]) => `${name}: ${check.detail}`);
    return { ready: false, reasons, checks };
  }

  const metricsReading = answerWithin(createMetricsRefresh(common, parts), bounded);
  /** Past the bound the gauges keep what they last showed (the refresh goes on, and sets them when the store answers). */
  async function refreshMetrics(): Promise<void> {
    await metricsReading();
  }

  const statusReading = answerWithin(statusNow, bounded);

  /** /status; past the bound, the last one read with what changed since in memory, saying the store is not answering. */
  async function status(): Promise<unknown> {
    const got = await statusReading();
    if (got.fresh) return got.value;
    return unansweredStatus({ last: got.last, nowMs: common.now(), startedAtMs: startedAt, storeReason: `store: ${notAnswering(got.last?.atMs)}`, head: head.state(), storePath: store.path });
  }

  async function statusNow(): Promise<Record<string, unknown>> {
    const now = common.now();
    const h = head.state();
    const states = engine.states();
    const cursors = await cursorsByKey(store);
    const snapshot = await health.evaluate();
    const replicaViews = parts.replicas ? await parts.replicas() : undefined;
    const holderOf = holdersOf(replicaViews);
    const sources = sourceViews({ sources: parts.sources, states, cursors, health: snapshot.sources, headBlock: h.block, replicas: replicaViews, replicaId: parts.replicaId, holderOf });
    creditHistory.sample();
    const meterState = meter.snapshot();
    const stats = await store.stats();
    const dead = await alertViews.deadLetters();
    const b = budget.state();
    const ready = await readiness();
    return {
      now: iso(now),
      started_at: iso(startedAt),
      uptime_seconds: Math.round((now - startedAt) / 1000),
      ready: ready.ready,
      reasons: ready.reasons,
      // The worst source state (the page's badge) and kaiawatch's operational alerts firing now.
      health: { worst: snapshot.worst, conditions: snapshot.conditions.map(({ key, kind, summary }) => ({ key, kind, summary })) },
      head: h,
      sources,
      explorer_url: explorer ?? null,
      sinks: Object.fromEntries(Object.entries(await dispatcher.states()).map(([name, sink]) => [name, { ...sink, holder: replicaViews === undefined ? null : (holderOf.get(`sink:${name}`) ?? null) }])),
      ...(replicaViews ? { replica: parts.replicaId ?? null, replicas: replicaViews } : {}),
      balance_watches: parts.balances ? await parts.balances() : [],
      alerts: await alertViews.latestAlerts(),
      dead_letters: dead.shown,
      dead_letters_total: dead.total,
      dead_letter_groups: await alertViews.deadLetterGroups(),
      oldest_pending: await alertViews.oldestPending(),
      missed_records: await missedRecordsNow(store),
      silences: await silencesNow(parts.silences, now),
      inhibitions: await inhibitionsNow(parts.inhibitor, now),
      credits: {
        day: meterState.day,
        spent_today: meterState.spent,
        budget: b.budget,
        remaining_today: b.budget === null ? null : Math.max(0, b.budget - meterState.spent),
        by_operation: meterState.byOperation,
        history: creditHistory.today(),
        paused_until: b.paused_until,
      },
      requests: await countsOf(common.metrics.explorerRequests, "operation", "status"),
      retries: await countsOf(common.metrics.explorerRetries, "operation"),
      // When this body was read: a store that does not answer is shown from the last one (see status()).
      read_at: iso(now),
      store: {
        path: store.path,
        answering: true,
        bytes: stats.bytes,
        writes: stats.writes,
        failed_writes: stats.failedWrites,
        last_write_failed: stats.lastWriteFailed,
        cursors: stats.cursors,
        outbox: stats.outbox,
      },
    };
  }

  const writes = createDaemonWrites(common, parts);
  return { readiness, status, refreshMetrics, ...writes, history: (filter) => store.listAttempts(filter), close: () => creditHistory.stop() };
}

/** /status shows this many of the records most recently reported missed by a reader of a `source: both` watch. */
export const MISSED_RECORDS_SHOWN = 20;

/**
 * The audit of `source: both` watches, from the store (every replica's and every run's
 * reports): records one reader returned and the other has not yet (`open`), those reported
 * missed by each reader, and the latest reports (the record's key and summary).
 */
async function missedRecordsNow(store: Store): Promise<Record<string, unknown>> {
  const counts = await store.countWitnesses();
  const latest = counts.missed.explorer + counts.missed.node === 0 ? [] : await store.listWitnesses({ missed: true, limit: MISSED_RECORDS_SHOWN });
  return {
    open: counts.open,
    missed_by: { explorer: counts.missed.node, node: counts.missed.explorer },
    latest: latest.map((w) => ({ missed_by: otherRole(w.role), watch: w.watch, family: w.family, rule: w.rule, block: w.block, record_key: w.record_key, summary: w.summary, transaction_hash: w.transaction_hash, alert_id: w.alert_id, reported_at: w.missed_at })),
  };
}

/**
 * The inhibit rules and the inhibitions in force, the sources read from the store for the page
 * (a source that resolved goes at once). While the store cannot be read, the ones last read.
 */
async function inhibitionsNow(inhibitor: Pick<Inhibitor, "current" | "status"> | undefined, now: number): Promise<ReturnType<Inhibitor["status"]>> {
  if (inhibitor === undefined) return { rules: [], active: [] };
  await inhibitor.current(now).catch(() => undefined);
  return inhibitor.status();
}

/**
 * The silences in force, read from the store for the page (one query): a silence added by
 * `kaiawatch silence` shows at once. While the store cannot be read, the ones last read.
 */
async function silencesNow(book: Pick<SilenceBook, "current" | "list"> | undefined, now: number): Promise<ReturnType<SilenceBook["list"]>> {
  if (book === undefined) return [];
  await book.current(now).catch(() => undefined);
  return book.list(now);
}
