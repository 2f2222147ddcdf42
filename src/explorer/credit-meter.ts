import type { Common } from "../common/common.js";
import { ExplorerBudgetExhaustedError, ExplorerDailyQuotaError } from "./errors.js";
import { OPERATIONS, type OperationName } from "./operations.js";

/** What the daemon persists in its store so that a restart does not forget today's spending. */
export interface CreditMeterState {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  spent: number;
  byOperation: Partial<Record<OperationName, number>>;
}

/** Credits set aside for a request in flight: committed on a 2xx answer, released otherwise. */
export interface CreditReservation {
  commit(): void;
  release(): void;
}

export interface CreditMeter {
  /** The daily budget, or undefined when unlimited. */
  readonly dailyBudget: number | undefined;
  /**
   * Sets the operation's cost aside before a request is sent; throws
   * ExplorerBudgetExhaustedError (nothing sent) when it does not fit in what is left today.
   */
  reserve(operation: OperationName): CreditReservation;
  /** Credits charged today (UTC) by this process. */
  spentToday(): number;
  /**
   * Replicas sharing one budget: what the others spent today (from the store), counted in
   * every budget decision. Forgotten when the day turns.
   */
  setSpentElsewhere(credits: number): void;
  /** This process's spending today plus the others' (the budget's measure). */
  spentTodayByAll(): number;
  /** Budget minus today's spending; Infinity without a budget. */
  remainingToday(): number;
  /** Today's credits per operation. */
  byOperation(): Partial<Record<OperationName, number>>;
  snapshot(): CreditMeterState;
  /** Adopts a persisted state if it is of today (UTC); a state of another day is ignored. */
  restore(state: CreditMeterState): void;
  /**
   * The explorer said the key's daily quota is spent (a 429 of type requestPerDay): no
   * request is sent until `retry_at` (reserve() throws ExplorerDailyQuotaError), then the
   * next one asks again. The state holds until an answer is charged.
   */
  quotaSpent(operation: OperationName, limit: number | undefined): ExplorerDailyQuotaError;
  /** The spent quota, until a request succeeds again; undefined while the explorer answers. */
  quota(): QuotaState | undefined;
}

/** The explorer's own daily quota, as its last answers told it. */
export interface QuotaState {
  /** The allowance its message named, when it did. */
  limit: number | null;
  /** The first refusal (ISO-8601). */
  since: string;
  /** When the next request may go (ISO-8601): the next 00:00 UTC, or an hour after the refusal if that comes first. */
  retry_at: string;
}

/**
 * How long a spent daily quota keeps kaiawatch from asking. The server counts its day in
 * its own time zone (klaytn/finder-api keys the count by LocalDate.now()), which no answer
 * states: asking again within the hour (a refused request is not charged) finds the reset
 * within an hour, whatever that zone is, for one free request an hour.
 */
export const QUOTA_RETRY_MS = 3_600_000;

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Counts the credits the explorer charges (an operation's cost per 2xx answer, nothing for
 * errors) per operation and per UTC day, and enforces an optional daily budget. Concurrent
 * requests reserve their cost first, so several in flight cannot overshoot the budget together.
 */
export function createCreditMeter(common: Common, options: { dailyBudget?: number } = {}): CreditMeter {
  const { metrics } = common;
  const budget = options.dailyBudget;
  let state: CreditMeterState = { day: utcDay(common.now()), spent: 0, byOperation: {} };
  let elsewhere = { day: state.day, credits: 0 };
  let pending = 0;
  let quota: (QuotaState & { retryMs: number }) | undefined;
  metrics.explorerCreditBudget.set(budget ?? 0);
  metrics.explorerCreditsToday.set(0);

  const roll = () => {
    const today = utcDay(common.now());
    if (today !== state.day) {
      state = { day: today, spent: 0, byOperation: {} };
      elsewhere = { day: today, credits: 0 };
      metrics.explorerCreditsToday.set(0);
    }
  };

  return {
    dailyBudget: budget,
    reserve(operation) {
      roll();
      if (quota !== undefined && common.now() < quota.retryMs) throw new ExplorerDailyQuotaError(operation, { limit: quota.limit ?? undefined, retryAt: quota.retry_at, sent: false });
      const cost = OPERATIONS[operation].cost;
      if (budget !== undefined) {
        const remaining = budget - state.spent - elsewhere.credits - pending;
        if (cost > remaining) throw new ExplorerBudgetExhaustedError(operation, cost, Math.max(0, remaining), budget);
      }
      pending += cost;
      let open = true;
      return {
        commit() {
          if (!open) return;
          open = false;
          pending -= cost;
          roll();
          quota = undefined;
          state.spent += cost;
          state.byOperation[operation] = (state.byOperation[operation] ?? 0) + cost;
          metrics.explorerCredits.inc({ operation }, cost);
          metrics.explorerCreditsToday.set(state.spent);
        },
        release() {
          if (!open) return;
          open = false;
          pending -= cost;
        },
      };
    },
    spentToday() {
      roll();
      return state.spent;
    },
    setSpentElsewhere(credits) {
      roll();
      elsewhere = { day: state.day, credits: Number.isFinite(credits) && credits > 0 ? credits : 0 };
    },
    spentTodayByAll() {
      roll();
      return state.spent + elsewhere.credits;
    },
    remainingToday() {
      roll();
      return budget === undefined ? Infinity : Math.max(0, budget - state.spent - elsewhere.credits);
    },
    byOperation() {
      roll();
      return { ...state.byOperation };
    },
    snapshot() {
      roll();
      return { day: state.day, spent: state.spent, byOperation: { ...state.byOperation } };
    },
    quotaSpent(operation, limit) {
      const now = common.now();
      const nextMidnight = (Math.floor(now / 86_400_000) + 1) * 86_400_000;
      const retryMs = Math.min(nextMidnight, now + QUOTA_RETRY_MS);
      quota = { limit: limit ?? quota?.limit ?? null, since: quota?.since ?? new Date(now).toISOString(), retry_at: new Date(retryMs).toISOString(), retryMs };
      return new ExplorerDailyQuotaError(operation, { limit: quota.limit ?? undefined, retryAt: quota.retry_at, sent: true });
    },
    quota() {
      if (quota === undefined) return undefined;
      const { limit, since, retry_at } = quota;
      return { limit, since, retry_at };
    },
    restore(saved) {
      roll();
      // The state comes from a file on disk: take only what is well-formed.
      if (saved == null || saved.day !== state.day || !isCount(saved.spent)) return;
      const byOperation: Partial<Record<OperationName, number>> = {};
      for (const name of Object.keys(OPERATIONS) as OperationName[]) {
        const value = saved.byOperation?.[name];
        if (isCount(value)) byOperation[name] = value;
      }
      state = { day: state.day, spent: saved.spent, byOperation };
      metrics.explorerCreditsToday.set(state.spent);
    },
  };
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
