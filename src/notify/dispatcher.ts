import type { Common } from "../common/common.js";
import { abortWhen, childSignal } from "../common/signals.js";
import type { Ownership } from "../store/ownership.js";
import { leaseResource } from "../store/resources.js";
import type { Store } from "../store/types.js";
import type { RuleLookup } from "./rule-lookup.js";
import type { DispatcherRule } from "./admission.js";
import { DEFAULT_BACKOFF, type BackoffPolicy } from "./backoff.js";
import { requeueDeadLetters, type DeadLetterSelector, type RequeueResult } from "./dead-letters.js";
import { createDeliveries, type DeliveryTotals } from "./deliveries.js";
import type { DispatcherSink } from "./dispatcher-sink.js";
import { createOutboxMaintenance } from "./outbox-maintenance.js";
import { createOutcomeGate } from "./outcome-gate.js";
import type { Inhibitor } from "./inhibitor.js";
import type { SilenceBook } from "./silences.js";
import { createWorker, isIdle, runWorker, type Worker } from "./sink-worker.js";
import { createWorkerPass } from "./worker-pass.js";
import { longestGroupInterval, type Route } from "./routes.js";

export type { DispatcherRule, DispatcherSink };

/** The dispatcher's rules as a lookup: see DispatcherOptions.rules. */
export interface DispatcherRules extends RuleLookup<DispatcherRule> {
  /** The longest `cooldown` of any rule, in ms (0: none): the cooldown stamps are kept that long. */
  longestCooldownMs: number;
}

/** A list of rules as a lookup. */
function rulesOfList(list: readonly DispatcherRule[]): DispatcherRules {
  const byName = new Map(list.map((rule) => [rule.name, rule]));
  let longestCooldownMs = 0;
  for (const rule of list) longestCooldownMs = Math.max(longestCooldownMs, rule.cooldownMs ?? 0);
  return { get: (name) => byName.get(name), longestCooldownMs };
}

export interface DispatcherOptions {
  store: Store;
  sinks: DispatcherSink[];
  /**
   * The rules, by name: a list, or a lookup with the longest of their cooldowns (a daemon
   * makes each rule from its config when asked: see RuleLookup).
   */
  rules: readonly DispatcherRule[] | DispatcherRules;
  /** The `routes:` tree: the alerts it sent are grouped as their routes say (group_by, group_wait, group_interval). */
  routes?: Route;
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
  /** While the store cannot record outcomes: the first wait before trying it again, doubled up to `maxMs`. Default 1 s up to 30 s. */
  storeProbe?: { baseMs: number; maxMs: number };
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
  /** `inhibit_rules:`: alerts a firing source inhibits are held back like a silence's (docs/reminders-and-inhibition.md). */
  inhibitor?: Pick<Inhibitor, "rules" | "current" | "noteHeld">;
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
 * `decideOutcome` (delivered, retry or dead; pure). The parts that run them are their own:
 * the worker loop (sink-worker.ts), one pass of it (worker-pass.ts), the application of
 * admission's decisions (apply-admission.ts), the sends and their outcomes (deliveries.ts),
 * the outbox's upkeep (outbox-maintenance.ts) and dead letters (dead-letters.ts). This
 * function wires them and runs them: start, stop, kick, drain.
 */
export function createDispatcher(common: Common, options: DispatcherOptions): Dispatcher {
  const { store } = options;
  const rules = "longestCooldownMs" in options.rules ? options.rules : rulesOfList(options.rules);
  const idlePollMs = options.idlePollMs ?? 1000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  const baseLogger = common.logger.child({ component: "dispatcher" });
  const totals: DeliveryTotals = { delivered: 0, suppressed: 0, retried: 0, dead: 0 };
  let draining = 0;
  let run: Run | undefined;

  const workers: Worker[] = options.sinks.map((sinkOptions) => createWorker(sinkOptions, baseLogger));
  const configuredSinks = new Set(workers.map((w) => w.name));
  /** Replicas: this process may deliver the sink only while it holds the sink's lease. */
  const owns = (w: Worker): boolean => options.ownership === undefined || options.ownership.holds(leaseResource({ sink: w.name })) !== undefined;
  const maintenance = createOutboxMaintenance(common, {
    store,
    sinks: [...configuredSinks],
    retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
    pruneBatch: options.pruneBatch ?? 1000,
    pruneIntervalMs: options.pruneIntervalMs ?? 10 * 60_000,
    // A route group's last-digest stamp is kept as long as a cooldown's: group_interval counts from it.
    longestCooldownMs: Math.max(0, longestGroupInterval(options.routes), rules.longestCooldownMs),
    logger: baseLogger,
  });
  // No send while the store cannot record its outcome (a full disk): see outcome-gate.ts.
  const gate = createOutcomeGate(common, { store, logger: baseLogger, probe: options.storeProbe });
  const deliveries = createDeliveries(common, {
    store,
    held: gate.held,
    backoff: options.backoff ?? DEFAULT_BACKOFF,
    random: options.random ?? Math.random,
    sendTimeoutMs: options.sendTimeoutMs ?? 60_000,
    idlePollMs,
    totals,
    owns,
    signalOf: (w) => (run === undefined ? undefined : (run.signals.get(w)?.signal ?? run.controller.signal)),
    countDead: maintenance.countDead,
  });
  const pass = createWorkerPass(common, {
    store,
    rules,
    ...(options.routes === undefined ? {} : { routes: options.routes }),
    silences: options.silences,
    inhibitor: options.inhibitor,
    passLimit: options.passLimit ?? 1000,
    flushGroups: () => draining > 0,
    deliveries,
    gate,
    totals,
    updateGauges: maintenance.updateGauges,
    logger: baseLogger,
  });

  function start(): void {
    if (run) return;
    const controller = new AbortController();
    abortWhen(common.signal, controller);
    for (const w of workers) w.dirty = true;
    const signals = new Map(workers.map((w) => [w, childSignal(controller.signal)]));
    const loop = { now: common.now, idlePollMs, owns, pass };
    run = { controller, signals, loops: [...workers.map((w) => runWorker(w, loop, signals.get(w)!.signal)), maintenance.run(controller.signal)] };
  }

  async function stop(): Promise<void> {
    const current = run;
    if (!current) return;
    current.controller.abort(new Error("dispatcher stopping"));
    await Promise.all(current.loops);
    await finishSends(workers, stopTimeoutMs, baseLogger);
    for (const { dispose } of current.signals.values()) dispose();
    await deliveries.settle();
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
      // Polling the workers' state is simpler than a completion protocol, and cheap at this rate.
      while (!workers.every((w) => isIdle(w, deadline))) {
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
    await deliveries.settle();
    let pending = 0;
    for (const count of await store.outboxCounts()) if (count.state === "pending" && configuredSinks.has(count.sink)) pending += count.count;
    return { delivered: totals.delivered - before.delivered, suppressed: totals.suppressed - before.suppressed, retried: totals.retried - before.retried, dead: totals.dead - before.dead, pending, timedOut };
  }

  async function retry(selector: DeadLetterSelector): Promise<RequeueResult> {
    const result = await requeueDeadLetters(store, selector, common.now());
    if (result.requeued > 0) {
      for (const w of workers) await maintenance.countDead(w.name);
      kick();
    }
    return result;
  }

  async function states(): Promise<Record<string, SinkStatus>> {
    const out: Record<string, SinkStatus> = {};
    for (const w of workers) out[w.name] = await sinkStatus(store, w, maintenance.countDead);
    return out;
  }

  return { start, stop, kick, drain, retry, prune: maintenance.prune, states };
}

/** Waits (bounded) for the workers' sends in flight, then abandons those still running: they go again after a restart. */
async function finishSends(workers: readonly Worker[], timeoutMs: number, logger: Common["logger"]): Promise<void> {
  const tasks = () => workers.flatMap((w) => [...w.tasks]);
  let timer: NodeJS.Timeout | undefined;
  const waited = await Promise.race([
    Promise.allSettled(tasks()).then(() => "done" as const),
    new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (waited === "done") return;
  logger.warn({ timeout_ms: timeoutMs }, "sends still in flight at stop; abandoning them (they go again after a restart)");
  for (const w of workers) for (const controller of w.sendControllers) controller.abort(new Error("dispatcher stopped"));
  await Promise.allSettled(tasks());
}

async function sinkStatus(store: Store, w: Worker, countDead: (sink: string) => Promise<number>): Promise<SinkStatus> {
  const pending = await store.countOutbox({ sink: w.name, state: "pending" });
  const retrying = await store.countOutbox({ sink: w.name, state: "pending", retrying: true });
  return {
    type: w.options.sink.type,
    pending: pending - retrying,
    retrying,
    dead: await countDead(w.name),
    in_flight: w.inFlightCount,
    delivered_total: w.deliveredTotal,
    last_error: w.lastError,
    last_error_at: w.lastErrorAt,
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
