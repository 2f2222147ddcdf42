import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import { type Ownership } from "../store/ownership.js";
import { leaseResource } from "../store/resources.js";
import type { OutboxChange, Store } from "../store/types.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import { admit, type DispatcherRule, type PlannedDelivery } from "./admission.js";
import { DEFAULT_BACKOFF, type BackoffPolicy } from "./backoff.js";
import { readCooldownView } from "./cooldown.js";
import type { CooldownStamp } from "../store/types.js";
import { readDueEntries } from "./due-entries.js";
import { decideOutcome, type OutcomePolicy } from "./outcome.js";
import { sendDelivery } from "./send-delivery.js";
import type { SilenceBook } from "./silences.js";
import { SinkError, type Sink } from "./sink.js";
import { createSinkRateLimiter, type SinkRateLimiter } from "./sink-rate-limiter.js";
import { createWaker, type Waker } from "./waker.js";
import { sleep } from "../common/sleep.js";
import { childSignal } from "../explorer/retry.js";

export interface DispatcherSink {
  sink: Sink;
  /** Sends of this sink in flight at once. */
  concurrency: number;
  /** Starts of sends per second (Slack: 1 per webhook); unlimited when absent. */
  ratePerSecond?: number;
  /** Failed attempts after which an alert becomes a dead letter. */
  maxAttempts: number;
  /** Age (since the alert entered the outbox) after which a failed alert becomes a dead letter. */
  maxAgeMs: number;
}

export type { DispatcherRule };

export interface DispatcherOptions {
  store: Store;
  sinks: DispatcherSink[];
  rules: DispatcherRule[];
  /** Delivered entries are pruned this long after delivery (config `store.retention`). Default 7 days. */
  retentionMs?: number;
  /**
   * The most due entries one pass of a sink's worker reads (oldest first). A backlog of
   * 100,000 is then worked through in passes of this size, not read whole at every pass.
   * Default 1,000.
   */
  passLimit?: number;
  /** Delivered entries removed per store commit when pruning. Default 1,000. */
  pruneBatch?: number;
  /** How often a sink's worker looks at the outbox when nothing wakes it. Default 1 s. */
  idlePollMs?: number;
  backoff?: BackoffPolicy;
  /** A send still running after this long is abandoned and counts as a failed attempt. Default 60 s. */
  sendTimeoutMs?: number;
  /** How long `stop()` waits for sends in flight before abandoning them. Default 10 s. */
  stopTimeoutMs?: number;
  /** How often delivered entries are pruned. Default 10 min. */
  pruneIntervalMs?: number;
  /** Replaceable in tests; Math.random by default. */
  random?: () => number;
  /**
   * Replicas: a sink's worker runs its passes only while this process holds the sink's lease,
   * so its rate limit, concurrency, digests and cooldowns hold as in one process. Absent:
   * every sink is this process's.
   */
  ownership?: Pick<Ownership, "holds">;
  /** Alerts an active silence matches are held back like a cooldown's (`kaiawatch silence`). */
  silences?: Pick<SilenceBook, "current" | "noteHeld">;
}

export interface SinkStatus {
  type: string;
  /** Waiting for their first attempt. */
  pending: number;
  /** Waiting after a failed attempt. */
  retrying: number;
  dead: number;
  in_flight: number;
  /** Entries this sink accepted since the dispatcher was created. */
  delivered_total: number;
  last_error: string | null;
  last_error_at: string | null;
}

export interface DrainResult {
  /** Entries delivered, suppressed by a cooldown, failed (to be retried) and dead-lettered during the drain. */
  delivered: number;
  suppressed: number;
  retried: number;
  dead: number;
  /** Entries of configured sinks still pending afterwards. */
  pending: number;
  /** True when the timeout ended the drain while something was still due. */
  timedOut: boolean;
}

/** Which dead letters `retry` sends again: entry ids, alert ids or group ids, or all of them. */
export type DeadLetterSelector = { all: true } | { ids: readonly string[] };

export interface RequeueResult {
  requeued: number;
  /** Given ids that matched no dead letter. */
  unmatched: string[];
}

export interface Dispatcher {
  start(): void;
  /** Stops the workers and waits (bounded) for the sends in flight. */
  stop(): Promise<void>;
  /** New entries were committed: look now instead of at the next idle poll. */
  kick(): void;
  /**
   * Delivers everything due now, waiting out backoffs that end before the timeout, then
   * resolves. Open digests are sent at once unless `flushGroups` is false. Used by
   * `kaiawatch once` and tests; works with or without `start()`.
   */
  drain(options?: { timeoutMs?: number; flushGroups?: boolean }): Promise<DrainResult>;
  /** Requeues dead letters and wakes the workers. */
  retry(selector: DeadLetterSelector): Promise<RequeueResult>;
  /** Removes delivered entries older than the retention; returns how many. */
  prune(): Promise<number>;
  states(): Promise<Record<string, SinkStatus>>;
}

const DEFAULT_RETENTION_MS = 7 * 24 * 3600_000;

interface Worker {
  name: string;
  options: DispatcherSink;
  limiter: SinkRateLimiter;
  waker: Waker;
  logger: Common["logger"];
  inFlight: Set<string>;
  inFlightCount: number;
  tasks: Set<Promise<void>>;
  sendControllers: Set<AbortController>;
  /** Something changed since the last pass began (a kick, a finished send). */
  dirty: boolean;
  passing: boolean;
  /** When the last pass expects something to become due (a backoff ending, a digest closing). */
  nextAt: number | undefined;
  /** Deliveries the last pass planned but could not start for want of a free slot. */
  queue: PlannedDelivery[];
  /** When that pass listed the outbox. */
  queuedAt: number;
  deliveredTotal: number;
  lastError: string | null;
  lastErrorAt: string | null;
}

interface Run {
  controller: AbortController;
  /**
   * Each worker's own signal, following the controller's: a worker's waits (its waker, its
   * rate limiter, its sends) listen to it, so the shared signal holds one listener however
   * many sinks there are, and no signal passes Node's ten-listener warning.
   */
  signals: Map<Worker, { signal: AbortSignal; dispose: () => void }>;
  loops: Promise<void>[];
}

/**
 * The delivery side of guarantee 3: entries leave the outbox only when their sink accepted
 * them, under a Delivery id that is the same on every retry and after a restart. Each sink
 * has its own worker loop, concurrency, rate limit and backoff, so a slow or dead sink never
 * delays another; the watch engine never awaits the dispatcher (it calls `kick()`).
 *
 * Delivery runs in stages, as Alertmanager's notify pipeline does: `admit` (silences,
 * cooldown, grouping; pure), `sendDelivery` (one sink call under its rate limit) and
 * `decideOutcome` (delivered, retry or dead; pure). This function keeps what is not a
 * decision: the workers, their concurrency and wake-ups, the AbortSignal, and the store's
 * reads (through `readDueEntries`) and writes.
 */
export function createDispatcher(common: Common, options: DispatcherOptions): Dispatcher {
  const { store } = options;
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const passLimit = options.passLimit ?? 1000;
  const pruneBatch = options.pruneBatch ?? 1000;
  const idlePollMs = options.idlePollMs ?? 1000;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const sendTimeoutMs = options.sendTimeoutMs ?? 60_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  const pruneIntervalMs = options.pruneIntervalMs ?? 10 * 60_000;
  const random = options.random ?? Math.random;
  const rules = new Map(options.rules.map((rule) => [rule.name, rule]));
  const longestCooldownMs = Math.max(0, ...options.rules.map((rule) => rule.cooldownMs ?? 0));
  const baseLogger = common.logger.child({ component: "dispatcher" });
  const warnedSinks = new Set<string>();
  const totals = { delivered: 0, suppressed: 0, retried: 0, dead: 0 };
  let draining = 0;
  let run: Run | undefined;
  /** Outcomes applied to the store but maybe not yet durable (see `record`). */
  const outcomeWrites = new Set<Promise<void>>();

  const workers: Worker[] = options.sinks.map((sinkOptions) => ({
    name: sinkOptions.sink.name,
    options: sinkOptions,
    limiter: createSinkRateLimiter(sinkOptions.ratePerSecond),
    waker: createWaker(),
    logger: baseLogger.child({ sink: sinkOptions.sink.name }),
    inFlight: new Set(),
    inFlightCount: 0,
    tasks: new Set(),
    sendControllers: new Set(),
    dirty: true,
    passing: false,
    nextAt: undefined,
    queue: [],
    queuedAt: 0,
    deliveredTotal: 0,
    lastError: null,
    lastErrorAt: null,
  }));
  const configuredSinks = new Set(workers.map((w) => w.name));
  /** Replicas: this process may deliver the sink only while it holds the sink's lease. */
  const ownsSink = (w: Worker): boolean => options.ownership === undefined || options.ownership.holds(leaseResource({ sink: w.name })) !== undefined;

  async function pass(w: Worker, signal: AbortSignal): Promise<number | undefined> {
    // A send finishing while this pass awaits must not start a delivery the pass is planning again.
    w.queue = [];
    const now = common.now();
    const at = new Date(now).toISOString();
    // Taken before the read: a send that ends while the read awaits records its entries, and
    // the list read before that still shows them pending; they must not be planned again.
    const inFlight = new Set(w.inFlight);
    const due = await readDueEntries(store, w.name, at, passLimit);
    // Both read from the store at every pass that has something due: another replica (or the
    // CLI) may have added a silence, or delivered this sink and stamped its cooldowns, since.
    const cooldown = await readCooldownView(store, w.name, due, rules);
    const silences = due.length > 0 && options.silences ? await options.silences.current(now) : [];
    const admission = admit({
      sink: w.name,
      due,
      inFlight,
      rules,
      silences,
      cooldown,
      flushGroups: draining > 0,
      now,
    });
    let nextAt = admission.nextAt;
    const soonest = (time: number) => {
      nextAt = nextAt === undefined ? time : Math.min(nextAt, time);
    };
    // Entries in backoff are not read; the store says when the first of them ends.
    const later = await store.nextAttemptAfter(w.name, at);
    if (later !== undefined) soonest(Date.parse(later));
    const stamps: CooldownStamp[] = admission.cooldownStarts.map((start) => ({ sink: w.name, rule: start.rule, key: start.key, at: now, entryId: start.entryId }));

    const { held } = admission;
    if (held.length > 0) {
      // The store has no "suppressed" state: delivered (never dead, which `retry` would resend),
      // with a note of why beside it that `kaiawatch outbox` shows.
      await store.updateOutbox(held.map(({ entry, reason }): OutboxChange => ({ id: entry.id, kind: "delivered", at, suppressed: reason })));
      const silenceIds = held.flatMap(({ silenceId }) => (silenceId === undefined ? [] : [silenceId]));
      if (silenceIds.length > 0) options.silences?.noteHeld(silenceIds);
      for (const { entry, reason } of held) common.metrics.alertsSuppressed.inc({ rule: entry.rule, reason });
      totals.suppressed += held.length;
      w.logger.info({ rule: held[0]?.entry.rule, count: held.length, silenced: silenceIds.length }, "alerts suppressed by cooldown or silence");
    }

    const groupChanges: OutboxChange[] = [];
    for (const { group, rule, cooldownKeys } of admission.closedDigests) {
      for (const entry of group.entries) groupChanges.push({ id: entry.id, kind: "group", group_id: group.id });
      for (const key of cooldownKeys) stamps.push({ sink: w.name, rule, key, at: now });
    }
    // The group id is durable before the first send: a retry or a restart resends the same
    // digest under the same Delivery id.
    if (groupChanges.length > 0) await store.updateOutbox(groupChanges);
    // The stamps too: a restart (or the replica that takes the sink over) must see a cooldown
    // that a send has started.
    await store.writeCooldowns(stamps);
    signal.throwIfAborted();

    let launched = 0;
    for (const delivery of admission.sends) {
      // A full worker is woken by the send that finishes; the rest wait in the queue.
      if (w.inFlightCount >= Math.max(1, w.options.concurrency)) break;
      launch(w, delivery);
      launched += 1;
    }
    w.queue = admission.sends.slice(launched);
    w.queuedAt = now;
    // A full batch that started nothing (all suppressed, say) leaves due entries behind it and
    // no send whose end would wake the worker: the next pass comes at once. Not otherwise: a
    // busy worker re-reading its batch at every turn would spend its time reading.
    if (due.length >= passLimit && launched === 0 && w.queue.length === 0 && w.inFlightCount === 0) soonest(now);

    await updateGauges(w);
    return nextAt;
  }

  async function updateGauges(w: Worker): Promise<void> {
    const pending = await store.countOutbox({ sink: w.name, state: "pending" });
    const retrying = await store.countOutbox({ sink: w.name, state: "pending", retrying: true });
    common.metrics.outboxPending.set({ sink: w.name, state: "pending" }, pending - retrying);
    common.metrics.outboxPending.set({ sink: w.name, state: "retrying" }, retrying);
  }

  async function countDead(w: Worker): Promise<number> {
    const dead = await store.countOutbox({ sink: w.name, state: "dead" });
    common.metrics.outboxPending.set({ sink: w.name, state: "dead" }, dead);
    return dead;
  }

  function launch(w: Worker, delivery: PlannedDelivery): void {
    const current = run;
    if (!current) return;
    w.inFlightCount += 1;
    for (const entry of delivery.entries) w.inFlight.add(entry.id);
    const task = deliver(w, delivery, current.signals.get(w)?.signal ?? current.controller.signal)
      .catch((error: unknown) => {
        w.logger.error({ delivery_id: delivery.id, error: describeError(error) }, "recording a delivery's outcome failed");
      })
      .finally(() => {
        w.inFlightCount -= 1;
        for (const entry of delivery.entries) w.inFlight.delete(entry.id);
        w.tasks.delete(task);
        if (launchQueued(w)) return;
        w.dirty = true;
        w.waker.wake();
      });
    w.tasks.add(task);
  }

  /**
   * Starts the next delivery the last pass planned, instead of a new pass: a pass lists the
   * sink's whole backlog, and one pass per send made a long backlog cost O(n²). A fresh pass
   * comes after a kick (new entries), during a pass, or once the plan is older than the idle
   * poll; the queued entries stay pending meanwhile (only this worker changes its pending
   * entries, and it changes only those it sends).
   */
  function launchQueued(w: Worker): boolean {
    const current = run;
    if (!current || current.controller.signal.aborted || w.dirty || w.passing) return false;
    if (common.now() - w.queuedAt >= idlePollMs) return false;
    const next = w.queue.shift();
    if (next === undefined) return false;
    launch(w, next);
    return true;
  }

  async function deliver(w: Worker, planned: PlannedDelivery, runSignal: AbortSignal): Promise<void> {
    // A send that waited for the rate limit starts only while this replica still holds the sink.
    const limiter: SinkRateLimiter = {
      pause: (ms) => w.limiter.pause(ms),
      acquire: async (signal) => {
        await w.limiter.acquire(signal);
        if (!ownsSink(w)) throw new Error("the sink's lease was lost");
      },
    };
    const result = await sendDelivery(planned, { sink: w.options.sink, limiter, timeoutMs: sendTimeoutMs, signal: runSignal, running: w.sendControllers });
    // Not started, or abandoned by stop(): the entries stay pending and go again (same id).
    if (result.kind === "not-started" || result.kind === "abandoned") return;

    const now = common.now();
    const at = new Date(now).toISOString();
    const { attempt } = result;
    const count = planned.entries.length;
    let failure: { message: string; permanent: boolean; retryAfterMs?: number } | undefined;
    if (result.kind === "failed") {
      const sinkError = result.error instanceof SinkError ? result.error : undefined;
      failure = { message: common.secrets.redact(describeError(result.error)), permanent: sinkError?.permanent ?? false, retryAfterMs: sinkError?.retryAfterMs };
      w.lastError = failure.message;
      w.lastErrorAt = at;
    }
    const outcome = decideOutcome({ entries: planned.entries, attempt, failure, now }, outcomePolicy(w));
    // Awaited before the entries leave `inFlight`: the PostgreSQL store applies the change only
    // when its transaction commits, and a pass reading the outbox before that found the sent
    // entries still pending and sent them again (the SQLite store applies it at once).
    await record(w, planned, outcome.changes);
    switch (outcome.kind) {
      case "delivered":
        common.metrics.alertsDelivered.inc({ sink: w.name }, count);
        for (const entry of planned.entries) common.metrics.deliveryLatency.observe({ sink: w.name }, Math.max(0, now - Date.parse(entry.created_at)) / 1000);
        w.deliveredTotal += count;
        totals.delivered += count;
        w.logger.debug({ delivery_id: planned.id, rule: planned.rule, alerts: count, attempt }, "delivered");
        break;
      case "dead":
        common.metrics.alertsDead.inc({ sink: w.name }, count);
        totals.dead += count;
        await countDead(w);
        w.logger.warn({ delivery_id: planned.id, rule: planned.rule, alerts: count, attempt, reason: outcome.reason }, "delivery failed for good: dead letter");
        break;
      case "retry":
        if (outcome.pauseSinkMs !== undefined) w.limiter.pause(outcome.pauseSinkMs);
        common.metrics.alertsRetried.inc({ sink: w.name }, count);
        totals.retried += count;
        w.logger.warn({ delivery_id: planned.id, rule: planned.rule, alerts: count, attempt, retry_in_ms: outcome.delayMs, error: failure?.message }, "delivery failed; will retry");
        break;
    }
  }

  function outcomePolicy(w: Worker): OutcomePolicy {
    return { maxAttempts: w.options.maxAttempts, maxAgeMs: w.options.maxAgeMs, backoff, random };
  }

  /**
   * Records a send's outcome without waiting for it to be durable. The store applies the
   * change at once (the next pass no longer sees a delivered entry as pending) and makes it
   * durable with a commit within milliseconds, together with every other outcome of that
   * moment (`durable: false`): one fsynced commit per send capped a sink at one alert per fsync.
   * Guarantee 3 holds: an entry is marked delivered only after its sink accepted it, and a
   * crash before the write is durable leaves it pending, to be sent again under the same id.
   * Resolves once the store has applied the change (SQLite: at once; PostgreSQL: at its
   * commit, made without waiting for the WAL flush).
   */
  function record(w: Worker, planned: PlannedDelivery, changes: OutboxChange[]): Promise<void> {
    const write: Promise<void> = store
      .updateOutbox(changes, { durable: false })
      .catch((error: unknown) => {
        w.logger.error({ delivery_id: planned.id, error: describeError(error) }, "recording a delivery's outcome failed");
      })
      .finally(() => outcomeWrites.delete(write));
    outcomeWrites.add(write);
    return write;
  }

  /** Resolves when every outcome recorded so far is durable (or failed and was logged). */
  async function settleOutcomes(): Promise<void> {
    await Promise.allSettled([...outcomeWrites]);
    await store.flush().catch((error: unknown) => baseLogger.error({ error: describeError(error) }, "recording the deliveries' outcomes failed"));
  }

  async function workerLoop(w: Worker, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (!ownsSink(w)) {
        // Another replica delivers this sink (or will, once the lease this one lost expires):
        // a send still running here is abandoned, so that the two never send for the sink at
        // once; its entries stay pending and the new holder sends them under the same ids.
        if (w.sendControllers.size > 0) {
          w.logger.info({ sends: w.sendControllers.size }, "the sink's lease was lost; abandoning its sends in flight (the new holder sends them again under the same ids)");
          for (const controller of w.sendControllers) controller.abort(new Error("the sink's lease was lost"));
        }
        w.dirty = false;
        w.queue = [];
        w.nextAt = undefined;
        await w.waker.wait(idlePollMs, signal);
        continue;
      }
      w.dirty = false;
      w.passing = true;
      let nextAt: number | undefined;
      try {
        nextAt = await pass(w, signal);
      } catch (error) {
        if (signal.aborted) break;
        w.logger.error({ error: describeError(error) }, "dispatcher pass failed; trying again");
        nextAt = common.now() + idlePollMs;
      } finally {
        w.passing = false;
      }
      w.nextAt = nextAt;
      const delay = nextAt === undefined ? idlePollMs : Math.min(idlePollMs, Math.max(0, nextAt - common.now()));
      await w.waker.wait(delay, signal);
    }
  }

  async function maintenanceLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await prune();
        await warnUnknownSinks();
        for (const w of workers) await countDead(w);
      } catch (error) {
        if (signal.aborted) break;
        baseLogger.error({ error: describeError(error) }, "outbox maintenance failed");
      }
      await sleep(pruneIntervalMs, signal).catch(() => undefined);
    }
  }

  async function warnUnknownSinks(): Promise<void> {
    for (const { sink, state } of await store.outboxCounts()) {
      if (state !== "pending" || configuredSinks.has(sink) || warnedSinks.has(sink)) continue;
      warnedSinks.add(sink);
      baseLogger.warn({ sink }, "pending alerts for a sink that is not configured; they stay in the outbox until it is configured again");
    }
  }

  /** Removes what is past retention in commits of `pruneBatch` entries: each costs what it removes, and deliveries go on between them. */
  async function prune(): Promise<number> {
    const now = common.now();
    const before = new Date(now - retentionMs).toISOString();
    let removed = 0;
    for (;;) {
      const batch = await store.pruneDelivered(before, pruneBatch);
      removed += batch;
      if (batch < pruneBatch) break;
    }
    // A stamp older than the longest cooldown holds nothing back any more (suppression notes go with their entries).
    await store.pruneCooldowns(now - longestCooldownMs);
    if (removed > 0) baseLogger.info({ count: removed }, "pruned delivered alerts past retention");
    return removed;
  }

  function start(): void {
    if (run) return;
    const controller = new AbortController();
    const onAbort = () => controller.abort(common.signal.reason);
    if (common.signal.aborted) onAbort();
    else common.signal.addEventListener("abort", onAbort, { once: true });
    controller.signal.addEventListener("abort", () => common.signal.removeEventListener("abort", onAbort), { once: true });
    for (const w of workers) w.dirty = true;
    const signals = new Map(workers.map((w) => [w, childSignal(controller.signal)]));
    run = { controller, signals, loops: [...workers.map((w) => workerLoop(w, signals.get(w)!.signal)), maintenanceLoop(controller.signal)] };
  }

  async function stop(): Promise<void> {
    const current = run;
    if (!current) return;
    current.controller.abort(new Error("dispatcher stopping"));
    await Promise.all(current.loops);
    const tasks = () => workers.flatMap((w) => [...w.tasks]);
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      Promise.allSettled(tasks()).then(() => "done" as const),
      new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), stopTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (waited === "timeout") {
      baseLogger.warn({ timeout_ms: stopTimeoutMs }, "sends still in flight at stop; abandoning them (they go again after a restart)");
      for (const w of workers) for (const controller of w.sendControllers) controller.abort(new Error("dispatcher stopped"));
      await Promise.allSettled(tasks());
    }
    for (const { dispose } of current.signals.values()) dispose();
    await settleOutcomes();
    if (run === current) run = undefined;
  }

  function kick(): void {
    for (const w of workers) {
      w.dirty = true;
      w.waker.wake();
    }
  }

  async function drain(drainOptions: { timeoutMs?: number; flushGroups?: boolean } = {}): Promise<DrainResult> {
    const deadline = common.now() + (drainOptions.timeoutMs ?? 30_000);
    const flush = drainOptions.flushGroups ?? true;
    const before = { ...totals };
    const ownRun = !run;
    if (flush) draining += 1;
    let timedOut = false;
    try {
      start();
      kick();
      const idle = (w: Worker) => !w.passing && !w.dirty && w.inFlightCount === 0 && w.queue.length === 0 && (w.nextAt === undefined || w.nextAt > deadline);
      // Polling the workers' state is simpler than a completion protocol, and cheap at this rate.
      while (!workers.every(idle)) {
        if (common.now() >= deadline) {
          timedOut = true;
          break;
        }
        await delay(10);
      }
    } finally {
      if (flush) draining -= 1;
      if (ownRun) await stop();
    }
    // What drain reports is on disk by the time it returns.
    await settleOutcomes();
    let pending = 0;
    for (const count of await store.outboxCounts()) if (count.state === "pending" && configuredSinks.has(count.sink)) pending += count.count;
    return {
      delivered: totals.delivered - before.delivered,
      suppressed: totals.suppressed - before.suppressed,
      retried: totals.retried - before.retried,
      dead: totals.dead - before.dead,
      pending,
      timedOut,
    };
  }

  async function retry(selector: DeadLetterSelector): Promise<RequeueResult> {
    const result = await requeueDeadLetters(store, selector, common.now());
    if (result.requeued > 0) {
      for (const w of workers) await countDead(w);
      kick();
    }
    return result;
  }

  async function states(): Promise<Record<string, SinkStatus>> {
    const out: Record<string, SinkStatus> = {};
    for (const w of workers) {
      const pending = await store.countOutbox({ sink: w.name, state: "pending" });
      const retrying = await store.countOutbox({ sink: w.name, state: "pending", retrying: true });
      out[w.name] = {
        type: w.options.sink.type,
        pending: pending - retrying,
        retrying,
        dead: await countDead(w),
        in_flight: w.inFlightCount,
        delivered_total: w.deliveredTotal,
        last_error: w.lastError,
        last_error_at: w.lastErrorAt,
      };
    }
    return out;
  }

  return { start, stop, kick, drain, retry, prune, states };
}

/**
 * Puts dead letters back into the outbox (attempts reset, digest dissolved so that it is
 * gathered again). An id may name an entry, an alert (its entries for every sink) or a digest.
 */
export async function requeueDeadLetters(store: Store, selector: DeadLetterSelector, now: number): Promise<RequeueResult> {
  const dead = await store.listOutbox({ state: "dead" });
  let chosen: OutboxEntry[];
  const unmatched: string[] = [];
  if ("all" in selector) {
    chosen = dead;
  } else {
    const picked = new Map<string, OutboxEntry>();
    for (const id of selector.ids) {
      const matches = dead.filter((entry) => entry.id === id || entry.alert.id === id || entry.group_id === id);
      if (matches.length === 0) unmatched.push(id);
      for (const entry of matches) picked.set(entry.id, entry);
    }
    chosen = [...picked.values()];
  }
  if (chosen.length > 0) {
    const at = new Date(now).toISOString();
    await store.updateOutbox(chosen.map((entry): OutboxChange => ({ id: entry.id, kind: "requeue", at })));
  }
  return { requeued: chosen.length, unmatched };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
