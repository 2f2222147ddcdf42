import { z } from "zod";
import { metaSlot, readMeta, writeMeta } from "../store/meta-slot.js";
import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import { utcDay, type CreditMeter } from "../explorer/credit-meter.js";
import { ExplorerBudgetExhaustedError } from "../explorer/errors.js";
import type { Store } from "../store/types.js";
import type { PauseControl } from "../watch/engine.js";

/**
 * Store meta key: the UTC day whose budget is spent, and the budget it was spent against. A
 * restart that day pauses at once (no request to find out again, and `credits_exhausted`
 * holds through the restart instead of resolving and firing anew); a larger budget in the
 * config after the restart does not.
 */
/** The day the daily budget ran out, and that budget: a restart that day stays paused (unless the budget changed). */
export const BUDGET_PAUSE = metaSlot("budget_pause", z.object({ day: z.string(), budget: z.number() }));

export interface BudgetGuardOptions {
  meter: CreditMeter;
  store: Store;
}

export interface BudgetState {
  budget: number | null;
  /** Credits spent today (UTC), by every replica. */
  spent_today: number;
  /** Midnight UTC when polling resumes, while paused. */
  paused_until: string | null;
}

export interface BudgetGuard extends PauseControl {
  state(): BudgetState;
}

/**
 * The daily credit budget seen from the daemon. The client refuses a request that would
 * pass the budget (ExplorerBudgetExhaustedError, nothing sent); the engine hands that error
 * here, and polling pauses until the UTC day turns: the cursors stay, so the first tick of
 * the new day catches up without skipping a block. Its alerts are operational conditions
 * (`credits_low` at 80%, `credits_exhausted` while paused), read from state() by the health
 * monitor: each fires once and resolves once, at 00:00 UTC.
 */
export async function createBudgetGuard(common: Common, options: BudgetGuardOptions): Promise<BudgetGuard> {
  const { meter, store } = options;
  const logger = common.logger.child({ component: "budget" });
  const budget = meter.dailyBudget;
  const today = () => utcDay(common.now());
  const nextMidnight = (day: string) => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString();
  const saved = await readMeta(store, BUDGET_PAUSE);
  let pausedDay: string | undefined = budget !== undefined && saved?.day === today() && saved.budget === budget ? saved.day : undefined;
  common.metrics.pollingPaused.set(pausedDay === undefined ? 0 : 1);
  if (pausedDay !== undefined) logger.warn({ spent: meter.spentTodayByAll(), budget, resumes_at: nextMidnight(pausedDay) }, "daily credit budget spent before this start: polling stays paused until 00:00 UTC");

  function resumeIfNewDay(): void {
    if (pausedDay === undefined || today() === pausedDay) return;
    logger.info({ paused_day: pausedDay }, "a new UTC day: polling resumes and catches up from the cursors");
    pausedDay = undefined;
    common.metrics.pollingPaused.set(0);
  }

  return {
    paused() {
      resumeIfNewDay();
      return pausedDay !== undefined;
    },
    pausedBy(error) {
      if (!(error instanceof ExplorerBudgetExhaustedError)) return false;
      resumeIfNewDay();
      const day = today();
      if (pausedDay !== day) {
        pausedDay = day;
        common.metrics.pollingPaused.set(1);
        // Logged once per pause, not per source and tick.
        logger.warn({ spent: meter.spentToday(), budget, resumes_at: nextMidnight(day) }, "daily credit budget spent: polling paused until 00:00 UTC");
        if (budget !== undefined) {
          writeMeta(store, BUDGET_PAUSE, { day, budget }).catch((e: unknown) => logger.warn({ err: describeError(e) }, "cannot save the budget pause; a restart today asks the explorer once more"));
        }
      }
      return true;
    },
    state() {
      resumeIfNewDay();
      return { budget: budget ?? null, spent_today: meter.spentTodayByAll(), paused_until: pausedDay === undefined ? null : nextMidnight(pausedDay) };
    },
  };
}
