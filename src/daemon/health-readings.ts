import { isStoreUnavailable } from "../store/errors.js";
import type { Store } from "../store/types.js";
import type { SourceState } from "../watch/engine.js";
import type { currentConditions } from "./operational-checks.js";

export type OutboxReading = Pick<Parameters<typeof currentConditions>[1], "sinks" | "deadLetters" | "removedSinks">;

/**
 * What the health monitor reads of the store: the outbox (pending per sink, dead letters)
 * and the stored cursors, each tolerant of a store that cannot be read for a while.
 */
export function createHealthReadings(store: Store, sinks: readonly string[]): { readOutbox(): Promise<OutboxReading>; readStoredCursors(): Promise<{ key: string; block: number }[]>; withStoredCursors(states: SourceState[], stored: ReadonlyMap<string, number>): SourceState[] } {
  const configured = new Set(sinks);
  let lastOutbox: OutboxReading = { sinks: sinks.map((name) => ({ name, pending: 0, oldest: undefined })), deadLetters: 0, removedSinks: [] };
  /**
   * The outbox as the sink and dead-letter conditions read it. A store that cannot be read
   * (PostgreSQL down) keeps the last reading: the evaluation must go on, or /readyz failed with
   * a 500 instead of saying 503 "the store cannot be read" (status/daemon-status.ts).
   */
  async function readOutbox(): Promise<OutboxReading> {
    try {
      lastOutbox = {
        sinks: await Promise.all(sinks.map(async (name) => ({ name, pending: await store.countOutbox({ sink: name, state: "pending" }), oldest: (await store.listOutbox({ sink: name, state: "pending", limit: 1 }))[0] }))),
        deadLetters: await store.countOutbox({ state: "dead" }),
        // Alerts kept for a sink a reload removed: they wait until a sink of that name is configured again.
        removedSinks: (await store.outboxCounts()).filter((count) => count.state === "pending" && count.count > 0 && !configured.has(count.sink)).map((count) => ({ name: count.sink, pending: count.count })),
      };
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
    }
    return lastOutbox;
  }

  /** The stored cursors, or none while the store cannot be read (as readOutbox). */
  async function readStoredCursors(): Promise<{ key: string; block: number }[]> {
    try {
      return await store.listCursors();
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      return [];
    }
  }

  /** A source's cursor from the store until it has ticked successfully in this run (after a restart onto a failing explorer, its lag is still known). */
  function withStoredCursors(states: SourceState[], stored: ReadonlyMap<string, number>): SourceState[] {
    if (stored.size === 0) return states;
    return states.map((state) => (state.cursor === null ? { ...state, cursor: stored.get(state.key) ?? null } : state));
  }
  return { readOutbox, readStoredCursors, withStoredCursors };
}
