import type { Dispatcher, DrainResult } from "../notify/dispatcher.js";
import type { SilenceBook } from "../notify/silences.js";
import type { LeaseResource, Ownership } from "../store/ownership.js";
import type { StatusServer } from "../status/status-server.js";
import type { BalanceMonitor } from "../watch/balance-monitor.js";
import type { OnceResult, WatchEngine } from "../watch/engine.js";
import type { CreditsKeeper } from "./credits-keeper.js";
import type { HealthLoop } from "./health-loop.js";
import type { HeartbeatLoop } from "./heartbeat-loop.js";

/** The running parts of a daemon, in the order start() and stop() need them. */
export interface LifecycleParts {
  ownership: Ownership;
  /** The plan's sources and sinks, balance watches and the operational alerts: what ownership takes part with. */
  resources: readonly LeaseResource[];
  engine: WatchEngine;
  balances: BalanceMonitor;
  dispatcher: Dispatcher;
  heartbeats: readonly HeartbeatLoop[];
  silences: SilenceBook;
  healthLoop: HealthLoop;
  credits: CreditsKeeper;
  /** Starts the status server (absent: `status.listen: false`). */
  startStatus?: () => Promise<StatusServer>;
  /** Closes the clients and sinks opened for the daemon, then the store. */
  close: () => Promise<void>;
}

export interface Lifecycle {
  start(): Promise<void>;
  statusUrl(): string | undefined;
  runOnce(options?: { drainTimeoutMs?: number }): Promise<{ scan: OnceResult; delivery: DrainResult }>;
  stop(): Promise<void>;
}

/** How a daemon's parts start (the status server first), run once, and stop (the pings first, the store last). */
export function createLifecycle(parts: LifecycleParts): Lifecycle {
  const { ownership, resources, engine, balances, dispatcher, heartbeats, silences, healthLoop, credits } = parts;
  let ownershipStarted = false;
  let statusServer: StatusServer | undefined;

  return {
    statusUrl: () => statusServer?.url,
    async start() {
      if (parts.startStatus !== undefined) statusServer = await parts.startStatus();
      await ownership.start(resources);
      ownershipStarted = true;
      healthLoop.start();
      dispatcher.start();
      for (const heartbeat of heartbeats) heartbeat.start();
      silences.start();
      engine.start();
      await balances.start();
      credits.start();
    },
    async runOnce(runOptions = {}) {
      if (!ownershipStarted) {
        await ownership.start(resources);
        ownershipStarted = true;
      }
      const scan = await engine.runOnce();
      await balances.runOnce();
      const delivery = await dispatcher.drain({ timeoutMs: runOptions.drainTimeoutMs ?? 30_000 });
      return { scan, delivery };
    },
    async stop() {
      await statusServer?.close();
      statusServer = undefined;
      healthLoop.stop();
      credits.stop();
      // First: a daemon that is stopping is not ready, and must not ping while it stops.
      await Promise.all(heartbeats.map((heartbeat) => heartbeat.stop()));
      await engine.stop();
      await balances.stop();
      await dispatcher.stop();
      // After the last commit and delivery: the others take over at once, not after a lease.
      if (ownershipStarted) await ownership.stop();
      silences.stop();
      await credits.save().catch(() => undefined);
      await parts.close();
    },
  };
}
