import type { Common } from "../common/common.js";
import type { Store } from "../store/types.js";

/** The first wait before the store is tried again while it cannot record outcomes, doubled at each failure up to OUTCOME_PROBE_MAX_MS. */
export const OUTCOME_PROBE_BASE_MS = 1_000;
export const OUTCOME_PROBE_MAX_MS = 30_000;

/** The code of the log lines that say delivery paused and resumed (README "Disk trouble"). */
export const DELIVERY_PAUSED_CODE = "KW_NOTIFY_PAUSED_STORE";

/**
 * Whether sends may start: not while the store cannot record their outcomes. A send whose
 * "delivered" or "failed" mark is rolled back (a full disk) leaves its alerts pending with
 * their attempts unchanged, so every pass sent them again with no backoff and no end (one
 * alert 30 times in 30 s). While the last write failed, sends are held for every sink; the
 * store is tried again (a small write: flush() after a failure) after 1 s, then 2, 4… up to
 * 30 s, as a failing sink is, and sending resumes once it takes a write. A store that fails
 * again within 30 s of resuming goes on with the longer waits: each pause costs at most one
 * send per alert whose outcome could not be recorded, and such pauses come ever rarer. The pause and the
 * resumption are logged with DELIVERY_PAUSED_CODE; `store_not_writable` and /readyz say the
 * same from the store's side.
 */
export interface OutcomeGate {
  /** Undefined when sends may start; otherwise when to ask again (ms since the epoch). Tries the store when that time has come. */
  check(): Promise<number | undefined>;
  /** Whether sends are held now, from memory (between passes: a queued send must not start either). */
  held(): boolean;
}

export function createOutcomeGate(
  common: Common,
  options: { store: Pick<Store, "path" | "flush" | "writeFailing">; logger: Common["logger"]; probe?: { baseMs: number; maxMs: number } },
): OutcomeGate {
  const { store, logger } = options;
  const baseMs = options.probe?.baseMs ?? OUTCOME_PROBE_BASE_MS;
  const maxMs = options.probe?.maxMs ?? OUTCOME_PROBE_MAX_MS;
  let pausedSince: number | undefined;
  let failures = 0;
  // When the last pause ended: a store that fails again soon after (a nearly full disk takes
  // the small probe but not the outcomes) goes on with the longer waits, not from the first.
  let resumedAt = -Infinity;
  let nextProbeAt = 0;
  // One probe at a time, whichever sink's worker asks: the workers share the store.
  let probing: Promise<void> | undefined;

  const probe = (): Promise<void> => {
    probing ??= store
      .flush()
      .catch(() => undefined) // the store logged it; writeFailing() tells
      .finally(() => (probing = undefined));
    return probing;
  };

  return {
    held: () => store.writeFailing(),
    async check() {
      const resume = (): undefined => {
        if (pausedSince !== undefined) logger.info({ code: DELIVERY_PAUSED_CODE, store: store.path, paused_ms: common.now() - pausedSince }, "the store takes writes again: deliveries resume");
        if (pausedSince !== undefined) resumedAt = common.now();
        pausedSince = undefined;
        return undefined;
      };
      // Another write (a window's commit, say) succeeded meanwhile: no need to wait for the probe.
      if (!store.writeFailing()) return resume();
      if (pausedSince !== undefined && common.now() < nextProbeAt) return nextProbeAt;
      await probe();
      const now = common.now();
      if (!store.writeFailing()) return resume();
      if (pausedSince === undefined && now - resumedAt > maxMs) failures = 0;
      failures += 1;
      const waitMs = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 20));
      nextProbeAt = now + waitMs;
      if (pausedSince === undefined) {
        pausedSince = now;
        logger.warn(
          { code: DELIVERY_PAUSED_CODE, store: store.path, retry_in_ms: waitMs },
          "the store cannot record delivery outcomes (its last write failed): deliveries are paused, or every pass would send the same alerts again; they resume when a write succeeds",
        );
      }
      return nextProbeAt;
    },
  };
}
