import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import type { OutboxChange, Store } from "../store/types.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import { DEFAULT_BACKOFF, retryDelayMs, type BackoffPolicy } from "./backoff.js";
import { createCooldownBook } from "./cooldown.js";
import { closeGroups, readRecordField, type GroupPolicy } from "./grouping.js";
import type { SilenceBook } from "./silences.js";
import { SinkError, type Delivery, type Sink } from "./sink.js";
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

export interface DispatcherRule {
  name: string;
  group?: GroupPolicy;
  /** Repeats of the rule (and cooldown key) within this period are suppressed. */
  cooldownMs?: number;
  /** A field of the alert's record (read like `group.by`); the whole rule when absent. */
  cooldownKey?: string;
}

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
  /** Alerts an active silence matches are held back like a cooldown's (`kaiawatch silence`). */
  silences?: Pick<SilenceBook, "silencing">;
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
  states(): Record<string, SinkStatus>;
}

const DEFAULT_RETENTION_MS = 7 * 24 * 3600_000;

interface Planned {
  /** The Delivery id: the alert id for one alert, the group id for a digest. */
  id: string;
  rule: string;
  entries: OutboxEntry[];
}

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
  queue: Planned[];
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
  const book = createCooldownBook(store);
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

  function cooldownKeyOf(rule: DispatcherRule, entry: OutboxEntry): string {
    return rule.cooldownKey === undefined ? "" : readRecordField(entry.alert.record, rule.cooldownKey);
  }

  async function pass(w: Worker, signal: AbortSignal): Promise<number | undefined> {
    // A send finishing while this pass awaits must not start a delivery the pass is planning again.
    w.queue = [];
    const now = common.now();
    const at = new Date(now).toISOString();
    const pending = duePending(w, at);
    let nextAt: number | undefined;
    const soonest = (time: number) => {
      nextAt = nextAt === undefined ? time : Math.min(nextAt, time);
    };
    // Entries in backoff are not read; the store says when the first of them ends.
    const later = store.nextAttemptAfter(w.name, at);
    if (later !== undefined) soonest(Date.parse(later));
    const order = new Map(pending.map((entry, index) => [entry.id, index]));
    const digests = new Map<string, OutboxEntry[]>();
    const singles: OutboxEntry[] = [];
    const buckets = new Map<string, { policy: GroupPolicy; rule: DispatcherRule; entries: OutboxEntry[] }>();
    const suppressed: OutboxEntry[] = [];
    const silenced = new Set<string>();

    for (const entry of pending) {
      if (w.inFlight.has(entry.id)) continue;
      if (entry.group_id !== undefined) {
        // Already part of a persisted digest: it is sent as that digest, whatever the config says now.
        const members = digests.get(entry.group_id) ?? [];
        members.push(entry);
        digests.set(entry.group_id, members);
        continue;
      }
      const dueAt = Date.parse(entry.next_attempt_at);
      if (dueAt > now) {
        soonest(dueAt);
        continue;
      }
      const rule = rules.get(entry.rule);
      // A silence decides like the cooldown below: once per alert, before its first attempt.
      if (entry.attempts === 0 && !book.isAdmitted(entry.id) && options.silences?.silencing(entry.rule, entry.alert, now) !== undefined) {
        suppressed.push(entry);
        silenced.add(entry.id);
        continue;
      }
      // The cooldown decides once per alert, before its first attempt; a retry is never suppressed.
      if (rule?.cooldownMs !== undefined && rule.cooldownMs > 0 && entry.attempts === 0 && !book.isAdmitted(entry.id)) {
        const key = cooldownKeyOf(rule, entry);
        if (book.isActive(w.name, rule.name, key, rule.cooldownMs, now)) {
          suppressed.push(entry);
          continue;
        }
        if (!rule.group) book.admit(w.name, rule.name, [key], [entry.id], now);
      }
      if (rule?.group) {
        const by = rule.group.by === undefined ? "" : readRecordField(entry.alert.record, rule.group.by);
        const bucketKey = `${rule.name}\u0000${by}`;
        const bucket = buckets.get(bucketKey) ?? { policy: rule.group, rule, entries: [] };
        bucket.entries.push(entry);
        buckets.set(bucketKey, bucket);
      } else {
        singles.push(entry);
      }
    }

    if (suppressed.length > 0) {
      // The store has no "suppressed" state: delivered (never dead, which `retry` would resend),
      // with a note in the cooldown book that `kaiawatch outbox` shows.
      await store.updateOutbox(suppressed.map((entry): OutboxChange => ({ id: entry.id, kind: "delivered", at })));
      const notes = suppressed.map((entry) => ({ id: entry.id, reason: silenced.has(entry.id) ? ("silence" as const) : ("cooldown" as const) }));
      book.noteSuppressed(notes, now);
      for (const [index, entry] of suppressed.entries()) common.metrics.alertsSuppressed.inc({ rule: entry.rule, reason: notes[index]!.reason });
      totals.suppressed += suppressed.length;
      w.logger.info({ rule: suppressed[0]?.rule, count: suppressed.length, silenced: silenced.size }, "alerts suppressed by cooldown or silence");
    }

    const groupChanges: OutboxChange[] = [];
    for (const bucket of buckets.values()) {
      const { closed, readyAt } = closeGroups(bucket.entries, bucket.policy, now, draining > 0);
      if (readyAt !== undefined) soonest(readyAt);
      for (const group of closed) {
        digests.set(group.id, group.entries);
        for (const entry of group.entries) groupChanges.push({ id: entry.id, kind: "group", group_id: group.id });
        const rule = bucket.rule;
        if (rule.cooldownMs !== undefined && rule.cooldownMs > 0) {
          book.admit(w.name, rule.name, new Set(group.entries.map((entry) => cooldownKeyOf(rule, entry))), [], now);
        }
      }
    }
    // The group id is durable before the first send: a retry or a restart resends the same
    // digest under the same Delivery id.
    if (groupChanges.length > 0) await store.updateOutbox(groupChanges);
    await book.persist();
    signal.throwIfAborted();

    const planned: Array<Planned & { index: number }> = [];
    for (const [id, members] of digests) {
      const dueAt = extreme(members, (entry) => Date.parse(entry.next_attempt_at), Math.max);
      if (dueAt > now) {
        soonest(dueAt);
        continue;
      }
      const first = members[0];
      if (first) planned.push({ id, rule: first.rule, entries: members, index: order.get(first.id) ?? 0 });
    }
    for (const entry of singles) planned.push({ id: entry.alert.id, rule: entry.rule, entries: [entry], index: order.get(entry.id) ?? 0 });
    planned.sort((a, b) => a.index - b.index);
    let launched = 0;
    for (const delivery of planned) {
      // A full worker is woken by the send that finishes; the rest wait in the queue.
      if (w.inFlightCount >= Math.max(1, w.options.concurrency)) break;
      launch(w, delivery);
      launched += 1;
    }
    w.queue = planned.slice(launched);
    w.queuedAt = now;
    // A full batch that started nothing (all suppressed, say) leaves due entries behind it and
    // no send whose end would wake the worker: the next pass comes at once. Not otherwise: a
    // busy worker re-reading its batch at every turn would spend its time reading.
    if (pending.length >= passLimit && launched === 0 && w.queue.length === 0 && w.inFlightCount === 0) soonest(now);

    updateGauges(w);
    return nextAt;
  }

  /**
   * The sink's pending entries due now, oldest first, at most `passLimit` of them; with
   * every member of each digest among them, due or not: a digest is sent whole or not at all,
   * and the limit must not cut one in two.
   */
  function duePending(w: Worker, at: string): OutboxEntry[] {
    const due = store.listOutbox({ sink: w.name, state: "pending", dueBefore: at, limit: passLimit });
    const ids = new Set(due.map((entry) => entry.id));
    const groups = new Set<string>();
    for (const entry of due) if (entry.group_id !== undefined) groups.add(entry.group_id);
    for (const groupId of groups) {
      for (const member of store.listOutbox({ sink: w.name, state: "pending", groupId })) {
        if (ids.has(member.id)) continue;
        ids.add(member.id);
        due.push(member);
      }
    }
    return due;
  }

  function updateGauges(w: Worker): void {
    const pending = store.countOutbox({ sink: w.name, state: "pending" });
    const retrying = store.countOutbox({ sink: w.name, state: "pending", retrying: true });
    common.metrics.outboxPending.set({ sink: w.name, state: "pending" }, pending - retrying);
    common.metrics.outboxPending.set({ sink: w.name, state: "retrying" }, retrying);
  }

  function countDead(w: Worker): number {
    const dead = store.countOutbox({ sink: w.name, state: "dead" });
    common.metrics.outboxPending.set({ sink: w.name, state: "dead" }, dead);
    return dead;
  }

  function launch(w: Worker, delivery: Planned): void {
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

  async function deliver(w: Worker, planned: Planned, runSignal: AbortSignal): Promise<void> {
    try {
      await w.limiter.acquire(runSignal);
    } catch {
      return; // stopping before the send began: the entries stay pending
    }
    const attempt = 1 + extreme(planned.entries, (entry) => entry.attempts, Math.max);
    const delivery: Delivery = { id: planned.id, rule: planned.rule, alerts: planned.entries.map((entry) => entry.alert), attempt };
    const controller = new AbortController();
    w.sendControllers.add(controller);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new SinkError("KW_NOTIFY_SEND_TIMEOUT", `the send did not finish within ${sendTimeoutMs} ms`, { permanent: false }));
    }, sendTimeoutMs);
    let failure: { error: unknown } | undefined;
    try {
      await raceAbort(w.options.sink.send(delivery, controller.signal), controller.signal);
    } catch (error) {
      failure = { error };
    } finally {
      clearTimeout(timer);
      w.sendControllers.delete(controller);
    }
    // Abandoned by stop(): whether the receiver got it is unknown, so the entries stay pending
    // and go again (same id) after the restart; receivers drop the duplicate by id.
    if (failure && controller.signal.aborted && !timedOut) return;

    const now = common.now();
    const at = new Date(now).toISOString();
    const ids = planned.entries.map((entry) => entry.id);
    const count = planned.entries.length;
    if (!failure) {
      record(w, planned, ids.map((id): OutboxChange => ({ id, kind: "delivered", at })));
      common.metrics.alertsDelivered.inc({ sink: w.name }, count);
      for (const entry of planned.entries) common.metrics.deliveryLatency.observe({ sink: w.name }, Math.max(0, now - Date.parse(entry.created_at)) / 1000);
      w.deliveredTotal += count;
      totals.delivered += count;
      w.logger.debug({ delivery_id: planned.id, rule: planned.rule, alerts: count, attempt }, "delivered");
      return;
    }

    const error = timedOut ? controller.signal.reason : failure.error;
    const message = common.secrets.redact(describeError(error));
    const sinkError = error instanceof SinkError ? error : undefined;
    const oldest = extreme(planned.entries, (entry) => Date.parse(entry.created_at), Math.min);
    w.lastError = message;
    w.lastErrorAt = at;
    let reason: string | undefined;
    if (sinkError?.permanent) reason = `permanent error: ${message}`;
    else if (attempt >= w.options.maxAttempts) reason = `gave up after ${attempt} attempts: ${message}`;
    else if (now - oldest >= w.options.maxAgeMs) reason = `gave up after ${attempt} attempts over ${formatDuration(now - oldest)} (max age ${formatDuration(w.options.maxAgeMs)}): ${message}`;

    if (reason !== undefined) {
      record(w, planned, ids.map((id): OutboxChange => ({ id, kind: "dead", at, reason })));
      common.metrics.alertsDead.inc({ sink: w.name }, count);
      totals.dead += count;
      countDead(w);
      w.logger.warn({ delivery_id: planned.id, rule: planned.rule, alerts: count, attempt, reason }, "delivery failed for good: dead letter");
    } else {
      const retryAfterMs = sinkError?.retryAfterMs;
      // Retry-After speaks for the receiver, not for one message: the whole sink waits.
      if (retryAfterMs !== undefined && retryAfterMs > 0) w.limiter.pause(retryAfterMs);
      const delayMs = retryDelayMs(attempt, backoff, retryAfterMs, random);
      const next = new Date(now + delayMs).toISOString();
      record(w, planned, ids.map((id): OutboxChange => ({ id, kind: "failed", at, error: message, next_attempt_at: next })));
      common.metrics.alertsRetried.inc({ sink: w.name }, count);
      totals.retried += count;
      w.logger.warn({ delivery_id: planned.id, rule: planned.rule, alerts: count, attempt, retry_in_ms: delayMs, error: message }, "delivery failed; will retry");
    }
  }

  /**
   * Records a send's outcome without waiting for it to be durable. The store applies the
   * change at once (the next pass no longer sees a delivered entry as pending) and makes it
   * durable with a commit within milliseconds, together with every other outcome of that
   * moment (`durable: false`): one fsynced commit per send capped a sink at one alert per fsync.
   * Guarantee 3 holds: an entry is marked delivered only after its sink accepted it, and a
   * crash before the write is durable leaves it pending, to be sent again under the same id.
   */
  function record(w: Worker, planned: Planned, changes: OutboxChange[]): void {
    const ids = changes.map((change) => change.id);
    // Both calls apply in memory before their first await, so they join the same write.
    const applied = store.updateOutbox(changes, { durable: false });
    book.settle(ids);
    const write = Promise.all([applied, book.persist()])
      .then(() => undefined)
      .catch((error: unknown) => {
        w.logger.error({ delivery_id: planned.id, error: describeError(error) }, "recording a delivery's outcome failed");
      })
      .finally(() => outcomeWrites.delete(write));
    outcomeWrites.add(write);
  }

  /** Resolves when every outcome recorded so far is durable (or failed and was logged). */
  async function settleOutcomes(): Promise<void> {
    await Promise.allSettled([...outcomeWrites]);
    await store.flush().catch((error: unknown) => baseLogger.error({ error: describeError(error) }, "recording the deliveries' outcomes failed"));
  }

  async function workerLoop(w: Worker, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
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
        warnUnknownSinks();
        for (const w of workers) countDead(w);
      } catch (error) {
        if (signal.aborted) break;
        baseLogger.error({ error: describeError(error) }, "outbox maintenance failed");
      }
      await sleep(pruneIntervalMs, signal).catch(() => undefined);
    }
  }

  function warnUnknownSinks(): void {
    for (const { sink, state } of store.outboxCounts()) {
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
    book.prune(now - longestCooldownMs, now - retentionMs);
    await book.persist();
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
    await book.persist().catch((error: unknown) => baseLogger.error({ error: describeError(error) }, "saving the cooldown book failed"));
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
    for (const count of store.outboxCounts()) if (count.state === "pending" && configuredSinks.has(count.sink)) pending += count.count;
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
      for (const w of workers) countDead(w);
      kick();
    }
    return result;
  }

  function states(): Record<string, SinkStatus> {
    const out: Record<string, SinkStatus> = {};
    for (const w of workers) {
      const pending = store.countOutbox({ sink: w.name, state: "pending" });
      const retrying = store.countOutbox({ sink: w.name, state: "pending", retrying: true });
      out[w.name] = {
        type: w.options.sink.type,
        pending: pending - retrying,
        retrying,
        dead: countDead(w),
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
  const dead = store.listOutbox({ state: "dead" });
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

/** Rejects when the signal aborts, even if the sink ignores it: a hung send must not hold its slot. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Math.max/min over a digest without spreading it into arguments (a large digest would overflow the stack). */
function extreme(entries: readonly OutboxEntry[], value: (entry: OutboxEntry) => number, pick: (a: number, b: number) => number): number {
  let result: number | undefined;
  for (const entry of entries) result = result === undefined ? value(entry) : pick(result, value(entry));
  return result ?? 0;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function formatDuration(ms: number): string {
  if (ms >= 3600_000) return `${Math.round(ms / 360_000) / 10} h`;
  if (ms >= 60_000) return `${Math.round(ms / 6_000) / 10} min`;
  if (ms >= 1000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms)} ms`;
}
