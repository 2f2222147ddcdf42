import { utcDayStart } from "./schedule-firings.js";
import { sharedTiming } from "./plan-node-logs.js";
import { narrowRule } from "./choose-sources.js";
import type { PlanInput, RuleInput, WatchInput } from "./plan.js";
import type { PlannedSource, SourceMember } from "./poller.js";
import type { SourceRule } from "./source-rule.js";
import { describeSource, sourceKey, type SourceDefinition } from "./source.js";
import type { WatchedRecord } from "../model/record.js";
import { rulesByWatch } from "./rules-by-watch.js";

/** Monday 2026-01-05, as the explorer planner: the schedule with the most ticks is chosen on a fixed day. */
const REFERENCE_DAY_MS = Date.UTC(2026, 0, 5);

/** The node source every account watch's `transactions` share: one per network. */
export function blockTransactionsDefinition(network: string): SourceDefinition {
  return { network, operation: "blockTransactions" };
}

/** An account watch's share of it: never polled, the key its position is kept under while the shared source serves it. */
export function accountTransactionsDefinition(network: string, account: string): SourceDefinition {
  return { network, operation: "blockTransactions", address: account.toLowerCase() };
}

/** The account watches whose rules read `transactions`, with those rules. */
function transactionNeeds<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>): Array<{ watch: W; account: string; rules: R[] }> {
  const byWatch = rulesByWatch(input.rules, "transactions");
  const needs: Array<{ watch: W; account: string; rules: R[] }> = [];
  for (const watch of input.watches) {
    const rules = byWatch.get(watch.name);
    if (rules === undefined || watch.account === undefined || !(watch.sources ?? []).includes("transactions")) continue;
    needs.push({ watch, account: watch.account.toLowerCase(), rules });
  }
  return needs;
}

/**
 * The one node source of a config's top-level transactions, or undefined when no rule reads
 * them. The node has no per-account query: each block's transactions are read once (one
 * kaia_getBlockReceipts) and each account watch's rules see the transactions from, to or
 * paid by its account, the filter a per-account source would apply. So a hundred wallets
 * cost what one costs. As with the explorer's shared sources, each watch keeps its position
 * under its own key (handover) and the source polls on its members' most frequent schedule,
 * in their smallest window, from the first watch's start.
 */
export function planTransactionSource<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>): PlannedSource | undefined {
  const needs = transactionNeeds(input);
  const first = needs[0];
  if (first === undefined) return undefined;
  const definition = blockTransactionsDefinition(input.network);
  const { schedule, maxWindowBlocks } = sharedTiming(input.defaults, needs.map((n) => n.watch), utcDayStart(input.dayMs ?? REFERENCE_DAY_MS));
  const rules: SourceRule[] = [];
  const members: SourceMember[] = [];
  for (const { watch, account, rules: watchRules } of needs) {
    const ownDefinition = accountTransactionsDefinition(input.network, account);
    const member: SourceMember = { watch: watch.name, ownKey: sourceKey(ownDefinition), filter: `from, to or fee payer ${account}`, handover: { skipThrough: -1 } };
    members.push(member);
    const filter = (record: WatchedRecord) => record.family === "transactions" && (record.data.from === account || record.data.to === account || record.data.fee_payer === account);
    for (const rule of watchRules) rules.push(narrowRule(input.compileRule(rule, watch, "transactions", ownDefinition), member.handover, filter));
  }
  return {
    key: sourceKey(definition),
    definition,
    description: describeSource(definition),
    watch: first.watch.name,
    family: "transactions",
    rules,
    schedule,
    start: first.watch.start ?? input.defaults.start,
    maxWindowBlocks,
    members,
  };
}
