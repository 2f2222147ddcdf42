import type { Store } from "../store/types.js";
import { lastBalanceReadings, type BalanceReading, type BalanceWatchInput } from "./balance-monitor.js";

/** A balance watch as /status shows it, on every replica: who reads it, its last reading, its rules' states. */
export interface BalanceWatchView {
  watch: string;
  schedule: string;
  addresses: string[];
  /** The replica holding the watch's lease (this process with the file store); null while nobody does. */
  holder: string | null;
  /** The last reading any replica made (from the store), or null before the first. */
  last_read: BalanceReading | null;
  rules: Array<{
    rule: string;
    /** "firing" while an episode of the rule is open for one of its (address, asset) pairs. */
    state: "ok" | "firing";
    firing: Array<{ address: string; asset: string; id: string; since_block: number; summary: string }>;
  }>;
}

/**
 * The balance watches' views, read from the store (episodes and last readings are rows, so
 * every replica's /status says the same) and from who holds each watch's lease.
 */
export async function balanceWatchViews(store: Store, watches: readonly BalanceWatchInput[], holders: () => Promise<ReadonlyMap<string, string>>): Promise<BalanceWatchView[]> {
  if (watches.length === 0) return [];
  const [episodes, readings, holding] = await Promise.all([store.listBalanceEpisodes(), lastBalanceReadings(store, watches.map((w) => w.name)), holders()]);
  return watches.map((watch) => ({
    watch: watch.name,
    schedule: watch.schedule.pattern,
    addresses: [...watch.addresses],
    holder: holding.get(watch.name) ?? null,
    last_read: readings.get(watch.name) ?? null,
    rules: watch.rules.map((rule) => {
      const firing = episodes
        .filter((episode) => episode.rule === rule.name)
        .map((episode) => ({ address: episode.address, asset: episode.asset, id: episode.alert.id, since_block: episode.alert.block, summary: episode.alert.summary }));
      return { rule: rule.name, state: firing.length > 0 ? ("firing" as const) : ("ok" as const), firing };
    }),
  }));
}
