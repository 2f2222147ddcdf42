import { ALERT_DOCUMENT_VERSION, OPERATIONAL_ALERT_SOURCE, type AlertDocument } from "../model/alert-document.js";
import { alertId } from "../rules/build-alert.js";

/** The rule name of the daily credit budget's operational alerts. */
export const BUDGET_RULE = "kaiawatch.budget";

/** "warning": 80% of the budget spent; "exhausted": the budget is spent and polling pauses. */
export type BudgetLevel = "warning" | "exhausted";

/** The share of the daily budget at which the warning goes out. */
export const BUDGET_WARNING_SHARE = 0.8;

/** What an operational alert's `record` holds (kaiawatch's own event, not an explorer record). */
export interface BudgetAlertRecord {
  kind: "credit_budget";
  level: BudgetLevel;
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  spent: number;
  budget: number;
  /** When polling resumes (the next UTC midnight), for "exhausted". */
  resumes_at: string | null;
}

export interface BudgetAlertInput {
  level: BudgetLevel;
  day: string;
  spent: number;
  budget: number;
  network: string;
  /** The last head read, for `block`; 0 when none was read yet. */
  head: number | null;
  now: Date;
}

const n = (value: number) => value.toLocaleString("en-US");

/**
 * kaiawatch's own alert about its daily credit budget, shaped as an AlertDocument so that
 * every sink renders it like any alert: rule "kaiawatch.budget", watch "kaiawatch", source
 * "kaiawatch", and `record` describing the budget. Its id is stable per level and UTC day, so
 * a restart that raises it again adds nothing to the outbox.
 */
export function buildBudgetAlert(input: BudgetAlertInput): AlertDocument {
  const nextDay = new Date(Date.parse(`${input.day}T00:00:00.000Z`) + 86_400_000).toISOString();
  const record: BudgetAlertRecord = {
    kind: "credit_budget",
    level: input.level,
    day: input.day,
    spent: input.spent,
    budget: input.budget,
    resumes_at: input.level === "exhausted" ? nextDay : null,
  };
  const spent = `${n(input.spent)} of ${n(input.budget)} credits on ${input.day} UTC`;
  const summary =
    input.level === "warning"
      ? `kaiawatch: ${Math.round(BUDGET_WARNING_SHARE * 100)}% of the daily credit budget is spent (${spent})`
      : `kaiawatch: the daily credit budget is spent (${spent}); polling pauses until 00:00 UTC, then catches up`;
  return {
    version: ALERT_DOCUMENT_VERSION,
    id: alertId(BUDGET_RULE, `${input.day}:${input.level}`),
    rule: BUDGET_RULE,
    watch: OPERATIONAL_ALERT_SOURCE,
    // Sinks render a source that is not a record family generically (no record fields),
    // which is what an operational alert needs.
    source: OPERATIONAL_ALERT_SOURCE,
    network: input.network,
    block: input.head ?? 0,
    transaction_hash: null,
    datetime: input.now.toISOString(),
    summary,
    links: {},
    record,
    created_at: input.now.toISOString(),
  };
}
