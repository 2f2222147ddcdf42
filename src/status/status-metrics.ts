import type { Common } from "../common/common.js";
import type { CreditMeter } from "../explorer/credit-meter.js";
import type { Cursor, Store } from "../store/types.js";
import type { WatchEngine } from "../watch/engine.js";
import type { PlannedSource } from "../watch/poller.js";
import type { HeadReading } from "./daemon-status.js";

/** Every cursor in one read (one query on PostgreSQL, not one per source). */
export async function cursorsByKey(store: Store): Promise<Map<string, Cursor>> {
  return new Map((await store.listCursors()).map((cursor) => [cursor.key, cursor]));
}

/**
 * Sets the gauges of /metrics that are read rather than pushed: each source's cursor, lag and
 * last tick, the store's size and the day's credits.
 */
export function createMetricsRefresh(common: Common, parts: { sources: readonly PlannedSource[]; store: Store; engine: WatchEngine; meter: CreditMeter; head: HeadReading }): () => Promise<void> {
  const { store, engine, meter, head } = parts;
  return async function refreshMetricsNow(): Promise<void> {
    const { metrics } = common;
    const h = head.state().block;
    const cursors = await cursorsByKey(store);
    for (const source of parts.sources) {
      const cursor = cursors.get(source.key);
      if (cursor === undefined) continue;
      const labels = { watch: source.watch, source: source.key };
      metrics.sourceCursor.set(labels, cursor.block);
      if (h !== null) metrics.sourceLag.set(labels, Math.max(0, h - cursor.block));
    }
    for (const state of engine.states()) {
      if (state.last_tick_seconds !== null) metrics.sourceLastTickDuration.set({ watch: state.watch, source: state.key }, state.last_tick_seconds);
    }
    metrics.storeSize.set((await store.stats()).bytes);
    // Reading the meter rolls it over at midnight even when nothing is being spent.
    metrics.explorerCreditsToday.set(meter.spentToday());
  };
}

/** A counter's values as nested objects by the given labels (e.g. requests by operation, then status). */
export async function countsOf(metric: { get(): Promise<{ values: Array<{ labels: Record<string, string | number | undefined>; value: number }> }> }, ...keys: string[]) {
  const out: Record<string, unknown> = {};
  for (const { labels, value } of (await metric.get()).values) {
    let node = out;
    keys.forEach((key, i) => {
      const label = String(labels[key] ?? "");
      if (i === keys.length - 1) node[label] = value;
      else node = (node[label] ??= {}) as Record<string, unknown>;
    });
  }
  return out;
}
