import type { Common } from "../common/common.js";
import { describeError, errorCode } from "../common/errors.js";
import { sleep } from "../common/sleep.js";
import type { Store } from "../store/types.js";

export interface OutboxMaintenanceOptions {
  store: Store;
  /** The configured sinks (pending entries of any other are warned about once). */
  sinks: readonly string[];
  /** Delivered entries are pruned this long after delivery. */
  retentionMs: number;
  /** Delivered entries removed per store commit. */
  pruneBatch: number;
  /** How often the loop prunes. */
  pruneIntervalMs: number;
  /** Stamps older than the longest cooldown hold nothing back and are pruned. */
  longestCooldownMs: number;
  logger: Common["logger"];
}

/** The outbox's upkeep beside the sink workers: pruning past retention (the delivery history too), the outbox gauges, unknown sinks. */
export interface OutboxMaintenance {
  /** Removes delivered entries, delivery attempts and reported missed records past retention (and stale cooldown stamps); returns how many entries. */
  prune(): Promise<number>;
  /** Sets the pending and retrying gauges of a sink. */
  updateGauges(sink: string): Promise<void>;
  /** Sets the dead gauge of a sink and returns its count. */
  countDead(sink: string): Promise<number>;
  /** Prunes, warns and counts on an interval until `signal`. */
  run(signal: AbortSignal): Promise<void>;
}

export function createOutboxMaintenance(common: Common, options: OutboxMaintenanceOptions): OutboxMaintenance {
  const { store, logger } = options;
  const configured = new Set(options.sinks);
  const warned = new Set<string>();

  async function warnUnknownSinks(): Promise<void> {
    for (const { sink, state } of await store.outboxCounts()) {
      if (state !== "pending" || configured.has(sink) || warned.has(sink)) continue;
      warned.add(sink);
      logger.warn({ sink }, "pending alerts for a sink that is not configured; they stay in the outbox until it is configured again");
    }
  }

  /** Removes what is past retention in commits of `pruneBatch` entries: each costs what it removes, and deliveries go on between them. */
  async function prune(): Promise<number> {
    const now = common.now();
    const before = new Date(now - options.retentionMs).toISOString();
    let removed = 0;
    for (;;) {
      const batch = await store.pruneDelivered(before, options.pruneBatch);
      removed += batch;
      if (batch < options.pruneBatch) break;
    }
    // The delivery history is kept as long as delivered alerts are: each attempt for the
    // retention after it was made (a dead letter's old attempts go too; its reason stays on it).
    let attempts = 0;
    for (;;) {
      const batch = await store.pruneAttempts(before, options.pruneBatch);
      attempts += batch;
      if (batch < options.pruneBatch) break;
    }
    // The records a reader of a `source: both` watch missed are shown (/status) as long as their alerts are kept.
    while ((await store.pruneWitnesses(before, options.pruneBatch)) === options.pruneBatch);
    // A stamp older than the longest cooldown holds nothing back any more (suppression notes go with their entries).
    await store.pruneCooldowns(now - options.longestCooldownMs);
    if (removed > 0) logger.info({ count: removed }, "pruned delivered alerts past retention");
    if (attempts > 0) logger.info({ count: attempts }, "pruned delivery attempts past retention");
    return removed;
  }

  async function countDead(sink: string): Promise<number> {
    const dead = await store.countOutbox({ sink, state: "dead" });
    common.metrics.outboxPending.set({ sink, state: "dead" }, dead);
    return dead;
  }

  return {
    prune,
    countDead,
    async updateGauges(sink) {
      const pending = await store.countOutbox({ sink, state: "pending" });
      const retrying = await store.countOutbox({ sink, state: "pending", retrying: true });
      common.metrics.outboxPending.set({ sink, state: "pending" }, pending - retrying);
      common.metrics.outboxPending.set({ sink, state: "retrying" }, retrying);
    },
    async run(signal) {
      while (!signal.aborted) {
        try {
          await prune();
          await warnUnknownSinks();
          for (const sink of options.sinks) await countDead(sink);
        } catch (error) {
          if (signal.aborted) break;
          logger.error({ code: errorCode(error, "KW_STORE_WRITE"), error: describeError(error) }, "outbox maintenance failed");
        }
        await sleep(options.pruneIntervalMs, signal).catch(() => undefined);
      }
    },
  };
}
