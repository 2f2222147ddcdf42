import { setTimeout as sleep } from "node:timers/promises";
import type { Common } from "../common/common.js";
import { describeError, errorCode } from "../common/errors.js";
import type { LeaseUse, Ownership } from "../store/ownership.js";
import { leaseResource } from "../store/resources.js";
import type { SourcePoller, TickResult } from "./poller.js";
import { createTickQueue } from "./tick-queue.js";
import { TickInterruptedError } from "./errors.js";
import { linkSignals } from "../common/signals.js";
import type { Schedule } from "../config/schedule.js";
import { pausedOut, startHeadLoop } from "./head-loop.js";
import { tickSource } from "./tick-source.js";

/** What `/status` and the CLI show of a source. */
export interface SourceState {
  key: string;
  watch: string;
  description: string;
  running: boolean;
  last_tick_at: string | null;
  /** When a tick of the source last succeeded (readiness looks at it). */
  last_ok_at: string | null;
  /** "paused": the daily credit budget is spent; the cursor stays and polling resumes the next UTC day. */
  last_outcome: "ok" | "error" | "paused" | null;
  last_error: string | null;
  /** Seconds the last tick took. */
  last_tick_seconds: number | null;
  ticks: number;
  skipped: number;
  cursor: number | null;
}

export interface WatchEngineOptions {
  pollers: SourcePoller[];
  /** The config's compiled schedules, by pattern as written (CompiledConfig.schedules): every poller's is among them. */
  schedules: ReadonlyMap<string, Schedule>;
  /** The head to scan up to: the RPC head minus `lag_blocks`. */
  readHead: (signal: AbortSignal) => Promise<number>;
  /** Each source's tick starts after a random delay up to this, so that many sources do not fire in the same millisecond. */
  jitterMs: number;
  /** The daily credit budget's pause: no ticks while paused; a budget error pauses instead of counting as a failure. */
  pause?: PauseControl;
  /**
   * Makes what the ticks deferred durable (the store's cursor advances of windows without
   * alerts): called once every tick of a firing has ended, and at the end of runOnce.
   */
  flush?: () => Promise<void>;
  /**
   * Replicas: only the sources whose lease this process holds are ticked (each firing asks),
   * and their commits carry the lease's epoch. Absent: every source, unfenced.
   */
  ownership?: Pick<Ownership, "holds" | "use">;
  /** Sources ticking at the same time (default 64); the others wait in a queue. */
  maxConcurrentTicks?: number;
  /**
   * The longest one tick may run (default 10 minutes): past it the tick's signal is
   * aborted with a TickTimeoutError. Without it a server that answers a byte at a time
   * held a source "running", and /readyz ready, indefinitely.
   */
  tickTimeoutMs?: number;
  /** How often the head is read for the sources with `schedule: head` (default 200 ms). */
  headIntervalMs?: number;
  /** Waits until the next head read of those sources (tests: resolved by the test, not a timer). Default: headIntervalMs. */
  waitForHead?: (signal: AbortSignal) => Promise<void>;
}

export interface PauseControl {
  /** True while polling is paused (checked before each scheduled tick). */
  paused(): boolean;
  /** Called with a tick's error; true when it is the budget running out (the control logs it once, not the engine per tick). */
  pausedBy(error: unknown): boolean;
}

export interface OnceResult {
  head: number;
  results: Array<{ key: string; result?: TickResult; error?: string }>;
}

const DEFAULT_CONCURRENT_TICKS = 64;

export interface WatchEngine {
  /** Schedule every source, with a first firing at once (the catch-up after a start); returns at once. */
  start(): void;
  /**
   * Resolves once no scheduled firing is reading the head, ticking or writing what its ticks
   * deferred: after start(), once its first firing has ended. What is held under a lease while it runs (a tick uses its
   * source's lease) is free again then, so a test steps the replicas' lease rounds after it
   * rather than racing the first ticks.
   */
  idle(): Promise<void>;
  /** One pass over every source up to the head (for `kaiawatch once`). */
  runOnce(): Promise<OnceResult>;
  /** Stop scheduling, abort running ticks and wait for their writes in flight. */
  stop(): Promise<void>;
  states(): SourceState[];
  lastHead(): number | null;
  /**
   * Ends the running tick of a source now (a cursor move: a catch-up would otherwise run on
   * from the old position, and commit over the move). Resolves once the tick has ended, at
   * once when none runs. The windows it committed stay committed.
   */
  interrupt(key: string, reason: string): Promise<void>;
}

/** The ticks of one firing (or of runOnce): they share a head, and the firing ends with its last tick. */
interface Firing {
  head: number;
  pending: number;
  /** runOnce's results, in the order of its pollers; a scheduled firing keeps none. */
  results: OnceResult["results"] | undefined;
  ended: () => void;
}

interface DueTick {
  poller: SourcePoller;
  firing: Firing;
  index: number;
}

export function createWatchEngine(common: Common, options: WatchEngineOptions): WatchEngine {
  const controller = new AbortController();
  // Linked (not AbortSignal.any) so that the explorer client can tell that the ticks' signals follow common.signal.
  const signal = linkSignals(common.signal, controller.signal).signal;
  const jobs: Array<{ stop(): void }> = [];
  // Sources queued or ticking: a firing skips them, so that ticks of a source never overlap.
  const due = new Set<string>();
  let head: number | null = null;
  const states = new Map<string, SourceState>(
    options.pollers.map(({ source }) => [source.key, { key: source.key, watch: source.watch, description: source.description, running: false, last_tick_at: null, last_ok_at: null, last_outcome: null, last_error: null, last_tick_seconds: null, ticks: 0, skipped: 0, cursor: null }]),
  );
  // The running tick of each source: interrupt() aborts it and waits for its end.
  const running = new Map<string, { abort: AbortController; ended: Promise<void> }>();
  /** The scheduled firings under way (idle() waits for them). */
  const firings = new Set<Promise<void>>();
  const queue = createTickQueue<DueTick>(options.maxConcurrentTicks ?? DEFAULT_CONCURRENT_TICKS, runDueTick);

  async function readHead(): Promise<number> {
    const value = await options.readHead(signal);
    head = value;
    common.metrics.headBlock.set(value);
    return value;
  }

  async function runDueTick({ poller, firing, index }: DueTick): Promise<void> {
    const key = poller.source.key;
    try {
      // After a stop the queue drains without ticking.
      signal.throwIfAborted();
      // Used, not just asked: a lease shed while this tick runs is released once it has ended.
      const lease: LeaseUse | undefined = options.ownership ? options.ownership.use(leaseResource({ source: key })) : { done: () => {} };
      // Lost between the firing and this turn in the queue: the new owner ticks it.
      if (lease === undefined) return;
      try {
        const result = await tickSource({ common, options, signal, states, running }, poller, firing.head, lease);
        if (firing.results) firing.results[index] = { key, result };
      } finally {
        lease.done();
      }
    } catch (error) {
      if (firing.results) firing.results[index] = { key, error: describeError(error) };
    } finally {
      due.delete(key);
      firing.pending -= 1;
      if (firing.pending === 0) firing.ended();
    }
  }

  /**
   * Queues a tick of each poller up to `currentHead`; resolves when the last has ended. With
   * jitter each tick is queued after a random delay up to `jitterMs`: one timer at a time
   * for the whole firing (its ticks sorted by delay), not one per source.
   */
  function runFiring(pollers: SourcePoller[], currentHead: number, jitterMs: number, collect: boolean): Promise<OnceResult["results"]> {
    return new Promise((resolve) => {
      const results: OnceResult["results"] = [];
      if (pollers.length === 0) return resolve(results);
      const firing: Firing = { head: currentHead, pending: pollers.length, results: collect ? results : undefined, ended: () => resolve(results) };
      const ticks = pollers.map((poller, index): DueTick => {
        due.add(poller.source.key);
        return { poller, firing, index };
      });
      if (jitterMs <= 0) {
        for (const dueTick of ticks) queue.push(dueTick);
        return;
      }
      const delays = ticks.map((dueTick) => ({ dueTick, delay: Math.floor(Math.random() * jitterMs) })).sort((a, b) => a.delay - b.delay);
      void (async () => {
        const started = performance.now();
        for (const { dueTick, delay } of delays) {
          const wait = delay - (performance.now() - started);
          // A stop during the wait queues the rest at once; the queue ends them without ticking.
          if (wait > 1 && !signal.aborted) await sleep(wait, undefined, { signal }).catch(() => undefined);
          queue.push(dueTick);
        }
      })();
    });
  }

  /**
   * After a firing: one write for every quiet window its ticks deferred. It never rejects (a
   * failed write is logged; the next write retries), so a firing can await it: idle() then
   * covers that write too.
   */
  async function flushAfterFiring(): Promise<void> {
    await options.flush?.().catch((error: unknown) => {
      if (!signal.aborted) common.logger.error({ code: errorCode(error, "KW_STORE_WRITE"), err: describeError(error) }, "cannot write the store after a tick; the next write retries");
    });
  }

  return {
    start() {
      // One cron job per distinct schedule: its sources share one head read per firing.
      const groups = new Map<string, SourcePoller[]>();
      for (const poller of options.pollers) {
        const group = groups.get(poller.source.schedule) ?? [];
        group.push(poller);
        groups.set(poller.source.schedule, group);
      }
      for (const [pattern, pollers] of groups) {
        const schedule = options.schedules.get(pattern);
        if (schedule === undefined) throw new Error(`schedule "${pattern}" is not among the compiled schedules`);
        if (schedule.head) {
          startHeadLoop({ common, options, signal, readHead, due, states, runFiring, flushAfterFiring }, pollers);
          continue;
        }
        let reading = false;
        /** Resolves when the firing it started has ended (at once when it starts none). */
        const fire = async (): Promise<void> => {
          if (reading || signal.aborted || pollers.every((poller) => pausedOut(options.pause, poller))) return;
          reading = true;
          let ready: SourcePoller[];
          let currentHead: number;
          try {
            currentHead = await readHead();
            ready = pollers.filter((poller) => {
              if (options.ownership && options.ownership.holds(leaseResource({ source: poller.source.key })) === undefined) return false;
              if (pausedOut(options.pause, poller)) return false;
              if (!due.has(poller.source.key)) return true;
              // A tick still queued or running (a long catch-up, a slow API) skips this one.
              states.get(poller.source.key)!.skipped += 1;
              common.metrics.sourceTicksSkipped.inc({ watch: poller.source.watch, source: poller.source.key });
              return false;
            });
          } catch (error) {
            if (!signal.aborted) common.logger.error({ code: errorCode(error, "KW_CHAIN_HEAD"), err: describeError(error) }, "cannot read the chain head; sources wait for the next tick");
            return;
          } finally {
            reading = false;
          }
          if (ready.length > 0) await runFiring(ready, currentHead, options.jitterMs, false).then(flushAfterFiring);
        };
        const tracked = () => {
          const firing = fire();
          firings.add(firing);
          void firing.finally(() => firings.delete(firing));
        };
        // Not protected: `reading` and `due` above skip what still runs, source by source.
        jobs.push(schedule.start(tracked));
        // A first firing at once: after a start or a restart, catch up now rather than at
        // the schedule's next time (up to a whole interval away).
        tracked();
      }
      common.logger.info({ sources: options.pollers.length, schedules: groups.size }, "watching");
    },

    async idle() {
      while (firings.size > 0) await Promise.all(firings);
      await queue.whenIdle();
    },

    async runOnce() {
      const currentHead = await readHead();
      const results = await runFiring(options.pollers, currentHead, 0, true);
      await options.flush?.();
      return { head: currentHead, results };
    },

    async stop() {
      for (const job of jobs) job.stop();
      controller.abort(new Error("stopping"));
      await queue.whenIdle();
    },

    states: () => [...states.values()].map((s) => ({ ...s })),
    lastHead: () => head,

    async interrupt(key, reason) {
      const tick = running.get(key);
      if (tick === undefined) return;
      tick.abort.abort(new TickInterruptedError(key, reason));
      await tick.ended;
    },
  };
}
