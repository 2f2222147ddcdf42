import type { Common } from "../common/common.js";
import type { Config } from "../config/types.js";
import { createSink } from "../notify/create-sink.js";
import type { DispatcherSink } from "../notify/dispatcher-sink.js";
import type { Sink } from "../notify/sink.js";
import { isHeartbeatSink, type HeartbeatSink } from "../notify/sinks/heartbeat.js";

/** The config's sinks, built once: those the dispatcher delivers to, and the heartbeat ones apart. */
export interface DaemonSinks {
  /** Every sink's name (each is a lease with replicas). */
  names: string[];
  /** Heartbeat sinks receive no alerts (the config refuses them in notify:): the dispatcher never sees them. */
  delivered: DispatcherSink[];
  heartbeats: HeartbeatSink[];
  close(): Promise<void>;
}

/** `overrides` replaces built sinks by name (tests and the demo's in-process receivers). */
export function buildSinks(common: Common, config: Config, overrides: Record<string, Sink> | undefined): DaemonSinks {
  const built = Object.entries(config.sinks).map(([name, sinkConfig]) => {
    const sink = overrides?.[name] ?? createSink(common, name, sinkConfig);
    return { sink, concurrency: sinkConfig.concurrency, ratePerSecond: sinkConfig.rate_per_second, maxAttempts: sinkConfig.max_attempts, maxAgeMs: sinkConfig.max_age };
  });
  return {
    names: built.map(({ sink }) => sink.name),
    delivered: built.filter(({ sink }) => !isHeartbeatSink(sink)),
    heartbeats: built.map(({ sink }) => sink).filter(isHeartbeatSink),
    async close() {
      await Promise.allSettled(built.map(({ sink }) => sink.close?.()));
    },
  };
}
