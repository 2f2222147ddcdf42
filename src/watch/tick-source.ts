import type { Common } from "../common/common.js";
import { describeError, errorCode } from "../common/errors.js";
import { linkSignals } from "../common/signals.js";
import type { HeldLease } from "../store/ownership.js";
import type { SourceState, WatchEngineOptions } from "./engine.js";
import { TickTimeoutError } from "./errors.js";
import type { SourcePoller, TickResult } from "./poller.js";

const DEFAULT_TICK_TIMEOUT_MS = 10 * 60_000;

/** What a tick shares with the engine that runs it. */
export interface TickEngine {
  common: Common;
  options: Pick<WatchEngineOptions, "tickTimeoutMs" | "pause">;
  /** The engine's: stopping it aborts the tick. */
  signal: AbortSignal;
  states: ReadonlyMap<string, SourceState>;
  /** The running tick of each source: the engine's interrupt() aborts it and waits for its end. */
  running: Map<string, { abort: AbortController; ended: Promise<void> }>;
}

/**
 * One tick of a source up to `currentHead`, within its deadline and its lease, kept in the
 * source's state (outcome, error, duration, cursor) and the metrics. Throws what failed it.
 */
export async function tickSource(engine: TickEngine, poller: SourcePoller, currentHead: number, lease: HeldLease): Promise<TickResult> {
  const { common, options, signal, states, running } = engine;
  const { source } = poller;
  const state = states.get(source.key)!;
  const started = performance.now();
  state.running = true;
  const timeoutMs = options.tickTimeoutMs ?? DEFAULT_TICK_TIMEOUT_MS;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new TickTimeoutError(source.key, timeoutMs)), timeoutMs);
  const interrupter = new AbortController();
  let tickEnded!: () => void;
  running.set(source.key, { abort: interrupter, ended: new Promise<void>((resolve) => (tickEnded = resolve)) });
  // The lease's signal too: a source lost or lapsed mid-tick stops before its next explorer request.
  const tickSignal = linkSignals(signal, deadline.signal, lease.signal, interrupter.signal);
  try {
    const result = await poller.tick(currentHead, tickSignal.signal, lease);
    state.cursor = result.cursor;
    state.last_outcome = "ok";
    state.last_ok_at = new Date(common.now()).toISOString();
    state.last_error = null;
    // Labels written out, not spread: prom-client keeps each label set, and a spread object
    // takes a hidden class of its own in V8 (10,000 sources, 10,000 hidden classes).
    common.metrics.sourceTicks.inc({ watch: source.watch, source: source.key, outcome: "ok" });
    return result;
  } catch (thrown) {
    // Whatever the tick was doing when its deadline passed fails with the abort; the
    // deadline is the cause worth reporting.
    const error: unknown = deadline.signal.aborted && !signal.aborted ? (deadline.signal.reason as unknown) : thrown;
    if (signal.aborted) {
      // A stop or a reload: the windows committed so far stand, and the next start goes on from them. Not a failure.
      common.logger.info({ watch: source.watch, source: source.key, duration_ms: Math.round(performance.now() - started) }, "tick ended by the stop; the cursor stays after the last committed window");
    } else if (interrupter.signal.aborted) {
      common.logger.info({ watch: source.watch, source: source.key, duration_ms: Math.round(performance.now() - started), reason: String(interrupter.signal.reason) }, "tick interrupted; the next tick starts from the cursor");
    } else if (error instanceof TickTimeoutError) {
      state.last_outcome = "error";
      state.last_error = describeError(error);
      common.metrics.sourceTicks.inc({ watch: source.watch, source: source.key, outcome: "timeout" });
      common.logger.warn({ watch: source.watch, source: source.key, duration_ms: Math.round(performance.now() - started), err: describeError(error) }, "tick aborted at its deadline; the cursor stays after the last committed window and the next tick goes on");
    } else if (options.pause?.pausedBy(error)) {
      state.last_outcome = "paused";
      state.last_error = describeError(error);
      common.metrics.sourceTicks.inc({ watch: source.watch, source: source.key, outcome: "paused" });
    } else {
      state.last_outcome = "error";
      state.last_error = describeError(error);
      common.metrics.sourceTicks.inc({ watch: source.watch, source: source.key, outcome: "error" });
      common.logger.error({ watch: source.watch, source: source.key, code: errorCode(error), err: describeError(error) }, "tick failed; the cursor stays and the next tick retries");
    }
    throw error;
  } finally {
    clearTimeout(timer);
    tickSignal.dispose();
    running.delete(source.key);
    tickEnded();
    state.running = false;
    state.ticks += 1;
    state.last_tick_at = new Date(common.now()).toISOString();
    state.last_tick_seconds = (performance.now() - started) / 1000;
    // The per-source gauge is set from the states when /metrics is scraped (daemon-status):
    // setting it here would allocate a new sample per tick of every source.
    common.metrics.sourceTickDuration.observe({ family: source.family }, state.last_tick_seconds);
  }
}
