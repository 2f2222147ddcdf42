import type { Common } from "../common/common.js";
import { describeError, errorCode } from "../common/errors.js";
import type { PlannedDelivery } from "./admission.js";
import type { DispatcherSink } from "./dispatcher-sink.js";
import { createSinkRateLimiter, type SinkRateLimiter } from "./sink-rate-limiter.js";
import { createWaker, type Waker } from "./waker.js";

/** One sink's delivery worker: its state between passes, its sends in flight and its wake-ups. */
export interface Worker {
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

export function createWorker(options: DispatcherSink, logger: Common["logger"]): Worker {
  return {
    name: options.sink.name,
    options,
    limiter: createSinkRateLimiter(options.ratePerSecond),
    waker: createWaker(),
    logger: logger.child({ sink: options.sink.name }),
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
  };
}

/** Idle: nothing in flight, queued, passing or due before `deadline` (what `drain` waits for). */
export function isIdle(w: Worker, deadline: number): boolean {
  return !w.passing && !w.dirty && w.inFlightCount === 0 && w.queue.length === 0 && (w.nextAt === undefined || w.nextAt > deadline);
}

export interface WorkerLoopOptions {
  now: () => number;
  /** How long the worker sleeps when nothing is due and nothing wakes it. */
  idlePollMs: number;
  /** Replicas: whether this process holds the sink's lease now. */
  owns: (w: Worker) => boolean;
  /** One pass: reads what is due, applies admission, starts sends; returns when something becomes due next. */
  pass: (w: Worker, signal: AbortSignal) => Promise<number | undefined>;
}

/** A sink's worker: a pass, then a sleep until something is due, a kick or a finished send wakes it; until `signal`. */
export async function runWorker(w: Worker, options: WorkerLoopOptions, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    if (!options.owns(w)) {
      await standBy(w, options.idlePollMs, signal);
      continue;
    }
    w.dirty = false;
    w.passing = true;
    let nextAt: number | undefined;
    try {
      nextAt = await options.pass(w, signal);
    } catch (error) {
      if (signal.aborted) break;
      w.logger.error({ code: errorCode(error), error: describeError(error) }, "dispatcher pass failed; trying again");
      nextAt = options.now() + options.idlePollMs;
    } finally {
      w.passing = false;
    }
    w.nextAt = nextAt;
    const delay = nextAt === undefined ? options.idlePollMs : Math.min(options.idlePollMs, Math.max(0, nextAt - options.now()));
    await w.waker.wait(delay, signal);
  }
}

/**
 * Another replica delivers this sink (or will, once the lease this one lost expires): a send
 * still running here is abandoned, so that the two never send for the sink at once; its
 * entries stay pending and the new holder sends them under the same ids.
 */
async function standBy(w: Worker, idlePollMs: number, signal: AbortSignal): Promise<void> {
  if (w.sendControllers.size > 0) {
    w.logger.info({ sends: w.sendControllers.size }, "the sink's lease was lost; abandoning its sends in flight (the new holder sends them again under the same ids)");
    for (const controller of w.sendControllers) controller.abort(new Error("the sink's lease was lost"));
  }
  w.dirty = false;
  w.queue = [];
  w.nextAt = undefined;
  await w.waker.wait(idlePollMs, signal);
}
