import { performance } from "node:perf_hooks";
import type { Logger } from "./logger.js";

/**
 * The slots of the beacon's shared memory (a BigInt64Array, read and written with Atomics):
 * what another thread reads of the main thread without asking it, since a main thread that
 * is held cannot answer.
 */
export const BEACON_SLOTS = {
  /** When the main thread last turned: its timer ran, or a store write started or ended (ms). */
  turnedAt: 0,
  /** When the store write holding the main thread now started (ms); 0 when none runs. */
  writeStartedAt: 1,
  /** The clock, when it is the virtual one (ms). */
  clock: 2,
  /** 1: both threads read the time from `clock` (tests move it); 0: the real clock. */
  virtual: 3,
} as const;
const SLOT_COUNT = 4;

/** How often the main thread stamps a turn while it is free. */
export const TURN_STAMP_MS = 1_000;

/**
 * Where the store says that a write starts and ends (SqliteStore): better-sqlite3 is
 * synchronous, so between the two the main thread does nothing else.
 */
export interface WriteBeacon {
  writeStarted(): void;
  writeEnded(): void;
}

/**
 * The main thread's beacon: in shared memory, when it last turned and when the store write
 * holding it started. A write on a frozen disk (a hung network volume, a disk in trouble)
 * never returns, and with it every endpoint of the status server stopped answering; the
 * status server's thread (front-door.ts) reads this to answer /healthz and /readyz with a
 * failure instead.
 */
export interface StallBeacon extends WriteBeacon {
  /** The memory the watching thread reads (BEACON_SLOTS). */
  readonly buffer: SharedArrayBuffer;
  /** The beacon's time (ms since the epoch): the real clock, or the virtual one of a test. */
  now(): number;
  /** Starts stamping turns (an unref'd timer); until then the stamps say nothing. Returns the stop. */
  startTurns(): () => void;
}

export interface StallBeaconOptions {
  /**
   * A write held the main thread longer than this: when it ends, a warning says how long
   * (status.frozen_after: /healthz and /readyz answered 503 meanwhile).
   */
  frozenAfterMs?: number;
  logger?: Logger;
  /** Tests: time is read from the shared clock slot, which they move (setBeaconClock), in both threads. */
  virtualClock?: { startMs: number };
}

/**
 * Time in both threads: each thread's time origin plus its monotonic time, so that the
 * wall clock being set (NTP) does not look like a held thread.
 */
export function beaconNow(slots: BigInt64Array): number {
  return Atomics.load(slots, BEACON_SLOTS.virtual) === 1n ? Number(Atomics.load(slots, BEACON_SLOTS.clock)) : Math.round(performance.timeOrigin + performance.now());
}

/** Moves a virtual beacon clock (any thread holding the buffer may). */
export function setBeaconClock(buffer: SharedArrayBuffer, ms: number): void {
  Atomics.store(new BigInt64Array(buffer), BEACON_SLOTS.clock, BigInt(Math.round(ms)));
}

export function createStallBeacon(options: StallBeaconOptions = {}): StallBeacon {
  const buffer = new SharedArrayBuffer(SLOT_COUNT * BigInt64Array.BYTES_PER_ELEMENT);
  const slots = new BigInt64Array(buffer);
  if (options.virtualClock !== undefined) {
    Atomics.store(slots, BEACON_SLOTS.virtual, 1n);
    Atomics.store(slots, BEACON_SLOTS.clock, BigInt(options.virtualClock.startMs));
  }
  const now = () => beaconNow(slots);
  const turned = (at: number) => Atomics.store(slots, BEACON_SLOTS.turnedAt, BigInt(at));
  turned(now());
  // Writes nest (a commit's probe inside a commit): the outermost one is what holds the thread.
  let depth = 0;
  let startedAt = 0;
  // Status servers reading the beacon now (startTurns): only then did the probes answer 503.
  let watchers = 0;
  return {
    buffer,
    now,
    writeStarted() {
      if (depth++ > 0) return;
      startedAt = now();
      // A turn too: the thread was free until now, so the bound counts from the write's start.
      turned(startedAt);
      Atomics.store(slots, BEACON_SLOTS.writeStartedAt, BigInt(startedAt));
    },
    writeEnded() {
      if (depth === 0 || --depth > 0) return;
      const endedAt = now();
      Atomics.store(slots, BEACON_SLOTS.writeStartedAt, 0n);
      turned(endedAt);
      const heldMs = endedAt - startedAt;
      if (options.frozenAfterMs !== undefined && heldMs > options.frozenAfterMs) {
        const probes = watchers > 0 ? " /healthz and /readyz answered 503 meanwhile;" : "";
        options.logger?.warn(
          { held_ms: heldMs, frozen_after_ms: options.frozenAfterMs },
          `a store write held kaiawatch for ${Math.round(heldMs / 1000)} s (longer than status.frozen_after):${probes} the disk under the store was frozen or very slow`,
        );
      }
    },
    startTurns() {
      turned(now());
      watchers++;
      const timer = setInterval(() => turned(now()), TURN_STAMP_MS);
      timer.unref();
      let stopped = false;
      return () => {
        if (stopped) return;
        stopped = true;
        watchers--;
        clearInterval(timer);
      };
    },
  };
}
