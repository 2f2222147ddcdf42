import type { Common } from "../common/common.js";
import { describeError, errorCode } from "../common/errors.js";
import type { AttemptNote, OutboxChange, Store } from "../store/types.js";
import type { PlannedDelivery } from "./admission.js";
import type { BackoffPolicy } from "./backoff.js";
import { decideOutcome, type DeliveryOutcome } from "./outcome.js";
import { sendDelivery } from "./send-delivery.js";
import { SinkError } from "./sink.js";
import type { SinkRateLimiter } from "./sink-rate-limiter.js";
import type { Worker } from "./sink-worker.js";

/** What the dispatcher counted since it was created (drain reports the difference). */
export interface DeliveryTotals {
  delivered: number;
  suppressed: number;
  retried: number;
  dead: number;
}

export interface DeliveriesOptions {
  store: Store;
  backoff: BackoffPolicy;
  random: () => number;
  sendTimeoutMs: number;
  /** A plan older than this is not worked from: a fresh pass lists the outbox again. */
  idlePollMs: number;
  totals: DeliveryTotals;
  /** Replicas: whether this process holds the sink's lease now. */
  owns: (w: Worker) => boolean;
  /** The signal the sends of this worker run under, or undefined when the dispatcher is not running. */
  signalOf: (w: Worker) => AbortSignal | undefined;
  /** Sends are held (the store cannot record outcomes: outcome-gate.ts); queued ones wait for a pass. */
  held: () => boolean;
  /** A dead letter changes the sink's dead gauge. */
  countDead: (sink: string) => Promise<number>;
}

/** Sends running under the workers: starting them, recording their outcomes, and starting the next one queued. */
export interface Deliveries {
  launch(w: Worker, delivery: PlannedDelivery): void;
  /** Resolves when every outcome recorded so far is durable (or failed and was logged). */
  settle(): Promise<void>;
}

export function createDeliveries(common: Common, options: DeliveriesOptions): Deliveries {
  const { store, totals } = options;
  /** Outcomes applied to the store but maybe not yet durable (see `record`). */
  const outcomeWrites = new Set<Promise<void>>();

  function launch(w: Worker, delivery: PlannedDelivery): void {
    const signal = options.signalOf(w);
    if (signal === undefined) return;
    w.inFlightCount += 1;
    for (const entry of delivery.entries) w.inFlight.add(entry.id);
    const task = deliver(w, delivery, signal)
      .catch((error: unknown) => {
        w.logger.error({ delivery_id: delivery.id, code: errorCode(error, "KW_STORE_WRITE"), error: describeError(error) }, "recording a delivery's outcome failed");
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
    const signal = options.signalOf(w);
    if (signal === undefined || signal.aborted || w.dirty || w.passing || options.held()) return false;
    if (common.now() - w.queuedAt >= options.idlePollMs) return false;
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
        if (!options.owns(w)) throw new Error("the sink's lease was lost");
      },
    };
    const result = await sendDelivery(planned, { sink: w.options.sink, limiter, timeoutMs: options.sendTimeoutMs, signal: runSignal, running: w.sendControllers, now: common.now });
    // Not started, or abandoned by stop(): the entries stay pending and go again (same id).
    if (result.kind === "not-started" || result.kind === "abandoned") return;

    const now = common.now();
    let failure: { message: string; permanent: boolean; retryAfterMs?: number } | undefined;
    let status = result.kind === "accepted" ? result.status : undefined;
    if (result.kind === "failed") {
      const sinkError = result.error instanceof SinkError ? result.error : undefined;
      status = sinkError?.status;
      failure = { message: common.secrets.redact(describeError(result.error)), permanent: sinkError?.permanent ?? false, retryAfterMs: sinkError?.retryAfterMs };
      w.lastError = failure.message;
      w.lastErrorAt = new Date(now).toISOString();
    }
    const policy = { maxAttempts: w.options.maxAttempts, maxAgeMs: w.options.maxAgeMs, backoff: options.backoff, random: options.random };
    const outcome = decideOutcome({ entries: planned.entries, attempt: result.attempt, failure, now }, policy);
    // Awaited before the entries leave `inFlight`: the PostgreSQL store applies the change only
    // when its transaction commits, and a pass reading the outbox before that found the sent
    // entries still pending and sent them again (the SQLite store applies it at once).
    // Each entry's change carries the attempt: the store records it in the same write (delivery history).
    const history: AttemptNote = { delivery_id: planned.id, attempt: result.attempt, latency_ms: result.latencyMs, ...(status === undefined ? {} : { status }), ...(failure === undefined ? {} : { error: failure.message }) };
    await record(w, planned, outcome.changes.map((change) => withHistory(change, history)));
    await count(w, planned, outcome, { attempt: result.attempt, now, error: failure?.message });
  }

  /** The metrics, totals and log line of one recorded outcome. */
  async function count(w: Worker, planned: PlannedDelivery, outcome: DeliveryOutcome, sent: { attempt: number; now: number; error?: string }): Promise<void> {
    const alerts = planned.entries.length;
    const fields = { delivery_id: planned.id, rule: planned.rule, alerts, attempt: sent.attempt };
    switch (outcome.kind) {
      case "delivered":
        common.metrics.alertsDelivered.inc({ sink: w.name }, alerts);
        for (const entry of planned.entries) common.metrics.deliveryLatency.observe({ sink: w.name }, Math.max(0, sent.now - Date.parse(entry.created_at)) / 1000);
        w.deliveredTotal += alerts;
        totals.delivered += alerts;
        w.logger.debug(fields, "delivered");
        return;
      case "dead":
        common.metrics.alertsDead.inc({ sink: w.name }, alerts);
        totals.dead += alerts;
        await options.countDead(w.name);
        w.logger.warn({ ...fields, reason: outcome.reason }, "delivery failed for good: dead letter");
        return;
      case "retry":
        if (outcome.pauseSinkMs !== undefined) w.limiter.pause(outcome.pauseSinkMs);
        common.metrics.alertsRetried.inc({ sink: w.name }, alerts);
        totals.retried += alerts;
        w.logger.warn({ ...fields, retry_in_ms: outcome.delayMs, error: sent.error }, "delivery failed; will retry");
        return;
    }
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
        w.logger.error({ delivery_id: planned.id, code: errorCode(error, "KW_STORE_WRITE"), error: describeError(error) }, "recording a delivery's outcome failed");
      })
      .finally(() => outcomeWrites.delete(write));
    outcomeWrites.add(write);
    return write;
  }

  return {
    launch,
    async settle() {
      await Promise.allSettled([...outcomeWrites]);
      await store.flush().catch((error: unknown) => common.logger.child({ component: "dispatcher" }).error({ code: errorCode(error, "KW_STORE_WRITE"), error: describeError(error) }, "recording the deliveries' outcomes failed"));
    },
  };
}

/** The change with the attempt it records (only outcomes carry one). */
function withHistory(change: OutboxChange, history: AttemptNote): OutboxChange {
  return change.kind === "delivered" || change.kind === "failed" || change.kind === "dead" ? { ...change, history } : change;
}
