import type { Common } from "../common/common.js";
import type { CreditMeter } from "../explorer/credit-meter.js";
import type { DeadLetterSelector, RequeueResult } from "../notify/dead-letters.js";
import type { Dispatcher } from "../notify/dispatcher.js";
import { isActive, type Silence, type SilenceBook } from "../notify/silences.js";
import type { SilenceChange } from "./silence-body.js";
import { readSuppressedNotes } from "../notify/cooldown.js";
import type { Cursor, Store } from "../store/types.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import type { WatchEngine } from "../watch/engine.js";
import type { PlannedSource } from "../watch/poller.js";
import { findCursorTarget, moveCursor, type MovedCursor } from "../watch/move-cursor.js";
import { createCreditHistory } from "./credit-history.js";
import { createReadiness } from "./readiness.js";
import { answerWithin } from "./answer-within.js";
import { isStoreUnavailable } from "../store/errors.js";
import { sleep } from "../common/sleep.js";
import type { AlertToQueue } from "./alerts-body.js";
import type { CursorMove } from "./cursor-body.js";
import { newOutboxEntries } from "../model/outbox-entry.js";
import type { CursorMoveResult, Readiness, StatusProvider } from "./status-server.js";

/** Alerts /status lists (newest first), and dead letters at most. */
export const LATEST_ALERTS = 50;
export const DEAD_LETTERS_SHOWN = 200;
/** Dead letters read to group them for the page (by digest, else by reason): more than a person reads one by one. */
export const DEAD_LETTERS_GROUPED = 10_000;
/** Entry ids a reason group carries for its re-queue button (the requeue API's limit). */
const GROUP_IDS_LIMIT = 1000;
/**
 * A cursor is moved between two ticks of its source: a running tick commits its own cursor
 * after each window and would overwrite the move, so it is interrupted first (it ends at its
 * next explorer request). Past this wait (a tick that does not end) the move is refused rather than lost.
 */
export const CURSOR_MOVE_WAIT_MS = 60_000;
const CURSOR_MOVE_POLL_MS = 50;
/**
 * /readyz, /status and /metrics answer within this long whatever the store does: past it from
 * what they last read, saying the store is not answering (a probe's timeout is often 1–2 s).
 */
export const HEALTH_ANSWER_MS = 1_000;
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

/** One delivery of an alert as /status shows it. */
interface DeliveryView {
  sink: string;
  entry_id: string;
  /** "suppressed": held back by a silence or a cooldown, never sent (the store keeps it as delivered). */
  state: OutboxEntry["state"] | "suppressed";
  attempts: number;
  error: string | null;
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
    const suppressed = await readSuppressedNotes(store, entries);
    const byAlert = new Map<string, { entry: OutboxEntry; deliveries: DeliveryView[] }>();
    for (const entry of entries) {
      const state = entry.state === "delivered" && suppressed[entry.id] !== undefined ? "suppressed" : entry.state;
      const delivery: DeliveryView = { sink: entry.sink, entry_id: entry.id, state, attempts: entry.attempts, error: cut(entry.dead_reason ?? entry.last_error ?? null) };
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
          digest: entry.group_id ?? null,
          block: entry.alert.block,
          summary: cut(entry.alert.summary),
          attempts: entry.attempts,
          reason: cut(entry.dead_reason ?? entry.last_error ?? null),
          created_at: entry.created_at,
          links: linksOf(entry.alert),
        })),
    };
  }

  /**
   * Dead letters grouped as a person handles them: one row per failed digest (its alerts went
   * as one message and failed as one), and one per sink and reason for the rest, with what a
   * re-queue of the whole group sends.
   */
  async function deadLetterGroups() {
    const groups = new Map<string, { sink: string; digest: string | null; reason: string | null; rules: string[]; count: number; newest_at: string; ids: string[] }>();
    for (const entry of await store.listOutbox({ state: "dead", newestFirst: true, limit: DEAD_LETTERS_GROUPED })) {
      const reason = cut(entry.dead_reason ?? entry.last_error ?? null);
      const key = entry.group_id !== undefined ? `digest\u0000${entry.group_id}` : `reason\u0000${entry.sink}\u0000${reason ?? ""}`;
      let group = groups.get(key);
      if (group === undefined) {
        group = { sink: entry.sink, digest: entry.group_id ?? null, reason, rules: [], count: 0, newest_at: entry.created_at, ids: entry.group_id !== undefined ? [entry.group_id] : [] };
        groups.set(key, group);
      }
      group.count += 1;
      if (!group.rules.includes(entry.rule)) group.rules.push(entry.rule);
      if (group.digest === null && group.ids.length < GROUP_IDS_LIMIT) group.ids.push(entry.id);
    }
    return [...groups.values()].sort((a, b) => b.count - a.count || b.newest_at.localeCompare(a.newest_at));
  }

  /** When each sink's oldest pending alert was queued: a backlog that does not move is a stalled sink. */
  async function oldestPending(): Promise<Record<string, string | null>> {
    const out: Record<string, string | null> = {};
    for (const name of Object.keys(await dispatcher.states())) out[name] = (await store.listOutbox({ sink: name, state: "pending", limit: 1 }))[0]?.created_at ?? null;
    return out;
  }

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

  const metricsReading = answerWithin(refreshMetricsNow, bounded);
  /** Past the bound the gauges keep what they last showed (the refresh goes on, and sets them when the store answers). */
  async function refreshMetrics(): Promise<void> {
    await metricsReading();
  }

  async function refreshMetricsNow(): Promise<void> {
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

  const statusReading = answerWithin(statusNow, bounded);

  /** /status; past the bound, the last one read with what changed since in memory, saying the store is not answering. */
  async function status(): Promise<unknown> {
    const got = await statusReading();
    if (got.fresh) return got.value;
    const now = common.now();
    const storeReason = `store: ${notAnswering(got.last?.atMs)}`;
    const last = got.last?.value;
    const lastReasons = Array.isArray(last?.reasons) ? (last.reasons as string[]).filter((reason) => !reason.startsWith("store:")) : [];
    const lastStore = (last?.store ?? { path: store.path }) as Record<string, unknown>;
    return {
      // Before anything is read (the store stalled at start): what memory holds, the lists empty.
      sources: [],
      sinks: {},
      alerts: [],
      dead_letters: [],
      dead_letters_total: 0,
      dead_letter_groups: [],
      oldest_pending: {},
      silences: [],
      health: { worst: "unknown", conditions: [] },
      ...last,
      now: iso(now),
      started_at: iso(startedAt),
      uptime_seconds: Math.round((now - startedAt) / 1000),
      ready: false,
      reasons: [storeReason, ...lastReasons],
      head: head.state(),
      read_at: got.last === undefined ? null : iso(got.last.atMs),
      store: { ...lastStore, answering: false },
    };
  }

  async function statusNow(): Promise<Record<string, unknown>> {
    const now = common.now();
    const h = head.state();
    const states = new Map(engine.states().map((state) => [state.key, state]));
    const cursors = await cursorsByKey();
    const snapshot = await health.evaluate();
    const healthOf = new Map(snapshot.sources.map((source) => [source.key, source]));
    // With replicas, which one holds each source and sink: a source held elsewhere ticks there,
    // and this replica's own ticks of it (before a handover) say nothing of it now.
    const replicaViews = parts.replicas ? await parts.replicas() : undefined;
    const holderOf = new Map<string, string>();
    for (const replica of replicaViews ?? []) for (const key of [...replica.sources, ...replica.sinks.map((sink) => `sink:${sink}`)]) holderOf.set(key, replica.id);
    const sources = parts.sources.map((source) => {
      const holder = replicaViews === undefined ? null : (holderOf.get(source.key) ?? null);
      const elsewhere = replicaViews !== undefined && holder !== parts.replicaId;
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
        description: source.description,
        family: source.family,
        schedule: source.schedule,
        cursor,
        lag: cursor !== null && h.block !== null ? Math.max(0, h.block - cursor) : null,
        running: state?.running ?? false,
        // ok | catching_up | retrying | failing | stalled (docs/operations.md, "Readiness").
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
      // The worst source state (the page's badge) and kaiawatch's operational alerts firing now.
      health: { worst: snapshot.worst, conditions: snapshot.conditions.map(({ key, kind, summary }) => ({ key, kind, summary })) },
      head: h,
      sources,
      explorer_url: explorer ?? null,
      sinks: Object.fromEntries(Object.entries(await dispatcher.states()).map(([name, sink]) => [name, { ...sink, holder: replicaViews === undefined ? null : (holderOf.get(`sink:${name}`) ?? null) }])),
      ...(replicaViews ? { replica: parts.replicaId ?? null, replicas: replicaViews } : {}),
      balance_watches: parts.balances ? await parts.balances() : [],
      alerts: await latestAlerts(),
      dead_letters: dead.shown,
      dead_letters_total: dead.total,
      dead_letter_groups: await deadLetterGroups(),
      oldest_pending: await oldestPending(),
      silences: await silencesNow(parts.silences, now),
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

  function requeueDeadLetters(selector: DeadLetterSelector): Promise<RequeueResult> {
    return dispatcher.retry(selector);
  }

  /**
   * Moves cursors as `kaiawatch cursors --set` does on a stopped daemon. Each source is moved
   * once it is between ticks, in the same turn of the event loop as that check, so that no
   * tick starts in between (a tick reads its cursor from the store when it starts).
   */
  async function moveCursors(moves: readonly CursorMove[]): Promise<CursorMoveResult> {
    // A source's key moves the source and every watch it serves; a watch's own key, when a
    // shared source serves it, moves that watch's position alone (see findCursorTarget).
    const targets = moves.map((move) => ({ move, target: findCursorTarget(parts.sources, move.source) }));
    const unknown = targets.filter((t) => t.target === undefined).map((t) => t.move.source);
    if (unknown.length > 0) return { ok: false, error: `the running daemon polls no source ${unknown.join(", ")} and serves no watch from it (a source of a watch no rule reads, or of another config?)` };
    const headBlock = head.state().block;
    if (moves.some((m) => m.block === "latest") && headBlock === null) return { ok: false, error: "the daemon has not read the chain head yet: cannot move a cursor to latest" };
    const moved: MovedCursor[] = [];
    for (const { move, target } of targets) {
      const source = target!.source;
      const to = move.block === "latest" ? headBlock! : move.block;
      const isRunning = () => engine.states().some((state) => state.key === source.key && state.running);
      for (let waited = 0; isRunning(); waited += CURSOR_MOVE_POLL_MS) {
        if (waited >= CURSOR_MOVE_WAIT_MS) return { ok: false, error: `source ${source.key} stayed in one tick for ${CURSOR_MOVE_WAIT_MS / 1000} s; moved so far: ${moved.length}` };
        // A running tick (a long catch-up) would go on from the old position and commit over
        // the move: it is ended at its next request, its committed windows kept.
        if (waited === 0) await engine.interrupt(source.key, `cursor moved to ${to} through the status API`);
        else await sleep(CURSOR_MOVE_POLL_MS, common.signal);
      }
      // setCursor changes the store in this turn; its await is only the commit to disk.
      moved.push(...(await moveCursor(store, target!, to, new Date(common.now()))));
    }
    return { ok: true, moved };
  }

  /** Queues what `replay --send` found, as that command does with the store in hand: deduplicated by entry id. */
  async function queueAlerts(alerts: readonly AlertToQueue[]): Promise<{ ok: true; queued: number; already_queued: number } | { ok: false; error: string }> {
    const known = new Set(Object.keys(await dispatcher.states()));
    const unknown = [...new Set(alerts.flatMap((a) => a.sinks).filter((sink) => !known.has(sink)))];
    if (unknown.length > 0) return { ok: false, error: `the running daemon has no sink ${unknown.join(", ")} (is it running another config?)` };
    const now = new Date(common.now());
    const entries = alerts.flatMap((a) => newOutboxEntries(a.alert, a.sinks, now));
    const { added } = await store.enqueue(entries);
    if (added > 0) dispatcher.kick();
    return { ok: true, queued: added, already_queued: entries.length - added };
  }

  /** `kaiawatch silence add/remove` beside a running daemon: the daemon's silence book takes it (and stores it). */
  async function changeSilences(change: SilenceChange): Promise<{ ok: true; silence: Silence } | { ok: false; status: 400 | 404; error: string }> {
    const book = parts.silences;
    if (book === undefined) return { ok: false, status: 400, error: "this daemon keeps no silences" };
    const now = common.now();
    if ("add" in change) {
      if (!isActive(change.add, now)) return { ok: false, status: 400, error: `the silence ended already (${change.add.expires_at})` };
      await book.add(change.add, now);
      return { ok: true, silence: change.add };
    }
    const removed = await book.remove(change.remove, now);
    return removed === undefined ? { ok: false, status: 404, error: `no active silence "${change.remove}" (an expired silence is already gone)` } : { ok: true, silence: removed };
  }

  return { readiness, status, refreshMetrics, requeueDeadLetters, moveCursors, queueAlerts, changeSilences, history: (filter) => store.listAttempts(filter), close: () => creditHistory.stop() };
}

function cut(text: string): string;
function cut(text: string | null): string | null;
function cut(text: string | null): string | null {
  if (text === null || text.length <= TEXT_LIMIT) return text;
  return `${text.slice(0, TEXT_LIMIT)}…`;
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
