import { setTimeout as sleep } from "node:timers/promises";
import { Cron } from "croner";
import type { Common } from "../common/common.js";
import { describeError, isAbortError } from "../common/errors.js";
import type { SourcePoller, TickResult } from "./poller.js";
import { createTickSlots } from "./tick-slots.js";

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
  ticks: number;
  skipped: number;
  cursor: number | null;
}

export interface WatchEngineOptions {
  pollers: SourcePoller[];
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
  /** Sources ticking at the same time (default 64); the others wait for a slot. */
  maxConcurrentTicks?: number;
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
  /** Schedule every source; returns at once. */
  start(): void;
  /** One pass over every source up to the head (for `kaiawatch once`). */
  runOnce(): Promise<OnceResult>;
  /** Stop scheduling, abort running ticks and wait for their writes in flight. */
  stop(): Promise<void>;
  states(): SourceState[];
  lastHead(): number | null;
}

export function createWatchEngine(common: Common, options: WatchEngineOptions): WatchEngine {
  const controller = new AbortController();
  const signal = AbortSignal.any([common.signal, controller.signal]);
  const jobs: Cron[] = [];
  const running = new Map<string, Promise<void>>();
  let head: number | null = null;
  const slots = createTickSlots(options.maxConcurrentTicks ?? DEFAULT_CONCURRENT_TICKS);
  const states = new Map<string, SourceState>(
    options.pollers.map(({ source }) => [source.key, { key: source.key, watch: source.watch, description: source.description, running: false, last_tick_at: null, last_ok_at: null, last_outcome: null, last_error: null, ticks: 0, skipped: 0, cursor: null }]),
  );

  async function readHead(): Promise<number> {
    const value = await options.readHead(signal);
    head = value;
    common.metrics.headBlock.set(value);
    return value;
  }

  async function tick(poller: SourcePoller, currentHead: number): Promise<TickResult> {
    await slots.acquire();
    try {
      signal.throwIfAborted();
      return await tickInSlot(poller, currentHead);
    } finally {
      slots.release();
    }
  }

  async function tickInSlot(poller: SourcePoller, currentHead: number): Promise<TickResult> {
    const { source } = poller;
    const state = states.get(source.key)!;
    const labels = { watch: source.watch, source: source.key };
    const started = performance.now();
    state.running = true;
    try {
      const result = await poller.tick(currentHead, signal);
      state.cursor = result.cursor;
      state.last_outcome = "ok";
      state.last_ok_at = new Date(common.now()).toISOString();
      state.last_error = null;
      common.metrics.sourceTicks.inc({ ...labels, outcome: "ok" });
      return result;
    } catch (error) {
      if (options.pause?.pausedBy(error)) {
        state.last_outcome = "paused";
        state.last_error = describeError(error);
        common.metrics.sourceTicks.inc({ ...labels, outcome: "paused" });
      } else if (!isAbortError(error) || !signal.aborted) {
        state.last_outcome = "error";
        state.last_error = describeError(error);
        common.metrics.sourceTicks.inc({ ...labels, outcome: "error" });
        common.logger.error({ watch: source.watch, source: source.key, err: describeError(error) }, "tick failed; the cursor stays and the next tick retries");
      }
      throw error;
    } finally {
      state.running = false;
      state.ticks += 1;
      state.last_tick_at = new Date(common.now()).toISOString();
      const seconds = (performance.now() - started) / 1000;
      common.metrics.sourceTickDuration.observe({ family: source.family }, seconds);
      common.metrics.sourceLastTickDuration.set(labels, seconds);
    }
  }

  function scheduleTick(poller: SourcePoller, currentHead: number): Promise<void> | undefined {
    const { source } = poller;
    if (running.has(source.key)) {
      // A tick still running (a long catch-up, a slow API) skips this one: ticks of a source never overlap.
      states.get(source.key)!.skipped += 1;
      common.metrics.sourceTicksSkipped.inc({ watch: source.watch, source: source.key });
      return undefined;
    }
    const delay = options.jitterMs > 0 ? Math.floor(Math.random() * options.jitterMs) : 0;
    const run = (async () => {
      if (delay > 0) await sleep(delay, undefined, { signal });
      await tick(poller, currentHead);
    })()
      .catch(() => {
        // Already logged and counted in tick(); an abort during the jitter wait is a normal stop.
      })
      .finally(() => running.delete(source.key));
    running.set(source.key, run);
    return run;
  }

  /** After a firing: one write for every quiet window its ticks deferred. */
  function flushAfter(runs: Promise<void>[]): void {
    const flush = options.flush;
    if (flush === undefined || runs.length === 0) return;
    void Promise.allSettled(runs)
      .then(() => flush())
      .catch((error: unknown) => {
        if (!signal.aborted) common.logger.error({ err: describeError(error) }, "cannot write the store after a tick; the next write retries");
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
        let reading = false;
        const fire = async () => {
          if (reading || signal.aborted || options.pause?.paused()) return;
          reading = true;
          try {
            const currentHead = await readHead();
            const runs: Promise<void>[] = [];
            for (const poller of pollers) {
              const run = scheduleTick(poller, currentHead);
              if (run) runs.push(run);
            }
            flushAfter(runs);
          } catch (error) {
            if (!signal.aborted) common.logger.error({ err: describeError(error) }, "cannot read the chain head; sources wait for the next tick");
          } finally {
            reading = false;
          }
        };
        jobs.push(new Cron(pattern, { timezone: "UTC" }, fire));
        // A first firing at once: after a start or a restart, catch up now rather than at
        // the schedule's next time (up to a whole interval away).
        void fire();
      }
      common.logger.info({ sources: options.pollers.length, schedules: groups.size }, "watching");
    },

    async runOnce() {
      const currentHead = await readHead();
      const results = await Promise.all(
        options.pollers.map(async (poller) => {
          try {
            return { key: poller.source.key, result: await tick(poller, currentHead) };
          } catch (error) {
            return { key: poller.source.key, error: describeError(error) };
          }
        }),
      );
      await options.flush?.();
      return { head: currentHead, results };
    },

    async stop() {
      for (const job of jobs) job.stop();
      controller.abort(new Error("stopping"));
      await Promise.allSettled(running.values());
    },

    states: () => [...states.values()].map((s) => ({ ...s })),
    lastHead: () => head,
  };
}
