import { z } from "zod";
import { metaSlot, readMeta, writeMeta } from "../store/meta-slot.js";
import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import { utcDay, type CreditMeter } from "../explorer/credit-meter.js";
import { ExplorerBudgetExhaustedError, ExplorerDailyQuotaError } from "../explorer/errors.js";
import type { QuotaState } from "../explorer/credit-meter.js";
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
  /** When polling resumes, while paused: midnight UTC for the budget, the next ask for the explorer's quota. */
  paused_until: string | null;
  /** The explorer's own daily quota, while its answers say it is spent (a 429 of type requestPerDay). */
  quota: QuotaState | null;
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

  /** The explorer's daily quota is spent and it is not yet time to ask again. */
  function quotaPaused(): boolean {
    const quota = meter.quota();
    return quota !== undefined && common.now() < Date.parse(quota.retry_at);
  }

  // The first refusal of a spent quota is logged once, not each hour it is asked again.
  let quotaLogged: string | undefined;
  function noteQuota(): void {
    const quota = meter.quota();
    if (quota === undefined || quotaLogged === quota.since) return;
    quotaLogged = quota.since;
    common.metrics.pollingPaused.set(1);
    logger.warn({ limit: quota.limit, retry_at: quota.retry_at }, "the explorer's daily quota for this key is spent: no request until it resets (kaiawatch asks again within the hour; a refused request is not charged), then polling catches up from the cursors");
  }

  function resumeIfNewDay(): void {
    if (pausedDay === undefined || today() === pausedDay) return;
    logger.info({ paused_day: pausedDay }, "a new UTC day: polling resumes and catches up from the cursors");
    pausedDay = undefined;
    common.metrics.pollingPaused.set(0);
  }

  return {
    paused() {
      resumeIfNewDay();
      return pausedDay !== undefined || quotaPaused();
    },
    pausedBy(error) {
      if (error instanceof ExplorerDailyQuotaError) {
        noteQuota();
        return true;
      }
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
      const quota = meter.quota() ?? null;
      if (quota === null && quotaLogged !== undefined) {
        quotaLogged = undefined;
        logger.info("the explorer answers again: its daily quota has reset; polling catches up from the cursors");
      }
      const pausedUntil = pausedDay !== undefined ? nextMidnight(pausedDay) : quota !== null ? quota.retry_at : null;
      common.metrics.pollingPaused.set(pausedUntil === null ? 0 : 1);
      return { budget: budget ?? null, spent_today: meter.spentTodayByAll(), paused_until: pausedUntil, quota };
    },
  };
}
