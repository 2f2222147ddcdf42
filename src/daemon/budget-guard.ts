import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import { utcDay, type CreditMeter } from "../explorer/credit-meter.js";
import { ExplorerBudgetExhaustedError } from "../explorer/errors.js";
import type { Store } from "../store/types.js";
import type { PauseControl } from "../watch/engine.js";
import { newOutboxEntries } from "../model/outbox-entry.js";
import { BUDGET_WARNING_SHARE, buildBudgetAlert, type BudgetLevel } from "./operational-alert.js";

/** Store meta key: which budget alerts went out on which UTC day (survives restarts). */
export const BUDGET_ALERTS_META_KEY = "budget_alerts";

interface SentAlerts {
  day: string;
  levels: BudgetLevel[];
}

export interface BudgetGuardOptions {
  meter: CreditMeter;
  store: Store;
  /** Sinks marked `operational: true`. */
  sinks: readonly string[];
  network: string;
  head: () => number | null;
  /** Wakes the dispatcher after an alert entered the outbox. */
  onQueued: () => void;
}

export interface BudgetState {
  budget: number | null;
  /** Midnight UTC when polling resumes, while paused. */
  paused_until: string | null;
  /** Budget alerts already sent today. */
  alerts_sent: BudgetLevel[];
}

export interface BudgetGuard extends PauseControl {
  /** Raises the 80% warning when due; the daemon calls it on a timer. */
  check(): Promise<void>;
  state(): BudgetState;
}

/**
 * The daily credit budget seen from the daemon. The client refuses a request that would
 * pass the budget (ExplorerBudgetExhaustedError, nothing sent); the engine hands that error
 * here, and polling pauses until the UTC day turns: the cursors stay, so the first tick of
 * the new day catches up without skipping a block. At 80% and at exhaustion an operational
 * alert goes, once per level and UTC day, to the sinks marked `operational: true`, through
 * the outbox like any alert (durable, retried).
 */
export async function createBudgetGuard(common: Common, options: BudgetGuardOptions): Promise<BudgetGuard> {
  const { meter, store } = options;
  const logger = common.logger.child({ component: "budget" });
  const budget = meter.dailyBudget;
  let pausedDay: string | undefined;
  const raising = new Set<string>();
  const today = () => utcDay(common.now());
  const nextMidnight = (day: string) => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString();
  common.metrics.pollingPaused.set(0);

  // The store's record, read again before each raise (another replica may have sent it);
  // state() answers from this copy, synchronously.
  let saved = await store.getMeta<SentAlerts>(BUDGET_ALERTS_META_KEY);
  const sentToday = (): BudgetLevel[] => (saved?.day === today() && Array.isArray(saved.levels) ? saved.levels : []);

  async function raise(level: BudgetLevel): Promise<void> {
    if (budget === undefined) return;
    const day = today();
    saved = await store.getMeta<SentAlerts>(BUDGET_ALERTS_META_KEY);
    const sent = sentToday();
    if (sent.includes(level) || raising.has(`${day}:${level}`)) return;
    raising.add(`${day}:${level}`);
    try {
      const now = new Date(common.now());
      const alert = buildBudgetAlert({ level, day, spent: meter.spentTodayByAll(), budget, network: options.network, head: options.head(), now });
      if (options.sinks.length === 0) logger.warn({ level }, "no sink is marked operational: true; this budget alert is only logged");
      else await store.enqueue(newOutboxEntries(alert, options.sinks, now));
      // The exhaustion alert supersedes the warning: a day that skips past 80% gets one alert.
      const levels: BudgetLevel[] = level === "exhausted" ? ["warning", "exhausted"] : [...new Set([...sent, level])];
      await store.setMeta(BUDGET_ALERTS_META_KEY, { day, levels } satisfies SentAlerts);
      saved = { day, levels };
      logger.warn({ level, spent: meter.spentToday(), budget, sinks: options.sinks }, alert.summary);
      options.onQueued();
    } finally {
      raising.delete(`${day}:${level}`);
    }
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
        raise("exhausted").catch((e: unknown) => logger.error({ err: describeError(e) }, "cannot queue the budget alert; it is tried again at the next check"));
      }
      return true;
    },
    async check() {
      resumeIfNewDay();
      if (budget === undefined) return;
      if (pausedDay !== undefined && !sentToday().includes("exhausted")) await raise("exhausted");
      if (meter.spentTodayByAll() >= BUDGET_WARNING_SHARE * budget) await raise("warning");
    },
    state() {
      resumeIfNewDay();
      return { budget: budget ?? null, paused_until: pausedDay === undefined ? null : nextMidnight(pausedDay), alerts_sent: sentToday() };
    },
  };
}
