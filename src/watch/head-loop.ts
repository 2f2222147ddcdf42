import { setTimeout as sleep } from "node:timers/promises";
import type { Common } from "../common/common.js";
import { describeError, errorCode } from "../common/errors.js";
import { leaseResource } from "../store/resources.js";
import type { OnceResult, PauseControl, SourceState, WatchEngineOptions } from "./engine.js";
import type { SourcePoller } from "./poller.js";
import { isNodeOperation } from "./source.js";

/**
 * Whether the credit budget's pause (or a spent daily quota) holds this source back: only
 * the explorer's sources spend credits, so the node's go on, and with `source: both` they
 * carry the watch while the explorer waits for its new day.
 */
export function pausedOut(pause: PauseControl | undefined, poller: SourcePoller): boolean {
  return pause?.paused() === true && !isNodeOperation(poller.source.definition.operation);
}

const DEFAULT_HEAD_INTERVAL_MS = 200;
/** A head-triggered source whose tick failed waits this long before it ticks again, doubling up to HEAD_RETRY_MAX_MS. */
const HEAD_RETRY_BASE_MS = 1_000;
const HEAD_RETRY_MAX_MS = 60_000;

/** What the head loop shares with the engine that runs it. */
export interface HeadLoopEngine {
  common: Common;
  options: Pick<WatchEngineOptions, "headIntervalMs" | "waitForHead" | "ownership" | "pause">;
  signal: AbortSignal;
  readHead(): Promise<number>;
  /** Sources queued or ticking. */
  due: ReadonlySet<string>;
  states: ReadonlyMap<string, SourceState>;
  runFiring(pollers: SourcePoller[], currentHead: number, jitterMs: number, collect: boolean): Promise<OnceResult["results"]>;
  flushAfterFiring(): Promise<void>;
}

/**
 * The sources with `schedule: head` tick when the head (minus lag_blocks) has passed their
 * cursor, not at wall-clock times: the head is read every headInterval over JSON-RPC, which
 * costs no explorer credits, so a block reaches its sinks a fraction of a second after the
 * node has it, and a source asks the explorer once per new head, as an every-second
 * schedule does at one block a second, or less. No jitter: these sources are there for
 * latency. A source whose tick failed waits a backoff (1 s, doubling up to a minute) before
 * it ticks again, so a failing explorer is not asked at every read of the head.
 */
export function startHeadLoop(engine: HeadLoopEngine, pollers: SourcePoller[]): void {
  const { common, options, signal, readHead, due, states, runFiring, flushAfterFiring } = engine;
  const intervalMs = options.headIntervalMs ?? DEFAULT_HEAD_INTERVAL_MS;
  const wait = options.waitForHead ?? ((s: AbortSignal) => sleep(intervalMs, undefined, { signal: s }));
  const backoff = new Map<string, { failures: number; notBefore: number }>();
  let headFailing = false;
  const fire = async () => {
    let currentHead: number;
    try {
      currentHead = await readHead();
      headFailing = false;
    } catch (error) {
      // Read several times a second: said once per outage, not at every read.
      if (!signal.aborted && !headFailing) common.logger.error({ code: errorCode(error, "KW_CHAIN_HEAD"), err: describeError(error) }, "cannot read the chain head; head-triggered sources wait until it can be read");
      headFailing = true;
      return;
    }
    // common.now, not performance.now: tests step the clock past a backoff.
    const now = common.now();
    const ready = pollers.filter((poller) => {
      const key = poller.source.key;
      if (options.ownership && options.ownership.holds(leaseResource({ source: key })) === undefined) return false;
      if (pausedOut(options.pause, poller)) return false;
      if (due.has(key)) return false;
      if ((backoff.get(key)?.notBefore ?? 0) > now) return false;
      const cursor = states.get(key)!.cursor;
      return cursor === null || cursor < currentHead;
    });
    if (ready.length === 0) return;
    void runFiring(ready, currentHead, 0, false).then(() => {
      for (const poller of ready) {
        const key = poller.source.key;
        if (states.get(key)!.last_outcome !== "error") {
          backoff.delete(key);
          continue;
        }
        const failures = (backoff.get(key)?.failures ?? 0) + 1;
        backoff.set(key, { failures, notBefore: common.now() + Math.min(HEAD_RETRY_MAX_MS, HEAD_RETRY_BASE_MS * 2 ** (failures - 1)) });
      }
      void flushAfterFiring();
    });
  };
  void (async () => {
    while (!signal.aborted) {
      await fire();
      try {
        await wait(signal);
      } catch {
        return; // stopped
      }
    }
  })();
}
