import type { InternalTransactionListItem } from "../explorer/types.js";
import type { WatchedRecord } from "../model/record.js";
import { parseCondition } from "../rules/parse-condition.js";
import { narrowRule } from "./choose-sources.js";
import { internalTransactionsSource } from "../config/sources-of-watch.js";
import { sharedTiming } from "./plan-node-logs.js";
import type { PlanInput, RuleInput, WatchInput } from "./plan.js";
import type { PlannedSource, SourceMember } from "./poller.js";
import { utcDayStart } from "./schedule-firings.js";
import type { SourceRule } from "./source-rule.js";
import { describeSource, sourceKey, type SourceDefinition } from "./source.js";
import { rulesByWatch } from "./rules-by-watch.js";

/** Monday 2026-01-05, as the explorer planner: the schedule with the most ticks is chosen on a fixed day. */
const REFERENCE_DAY_MS = Date.UTC(2026, 0, 5);

/** The node source of internal transactions: one per network, every node-read watch of them together. */
export function nodeTracesDefinition(network: string): SourceDefinition {
  return { network, operation: "nodeInternalTransactions" };
}

/**
 * The definition a watch's internal transactions are kept under in the node's traces source:
 * an account's share, or for an every_block watch the source's own (every every_block watch
 * shares operation 8 on the explorer too); undefined for a watch that reads none.
 */
export function traceShareDefinition(network: string, watch: WatchInput): SourceDefinition | undefined {
  if (watch.every_block === true) return nodeTracesDefinition(network);
  if (watch.account === undefined || !(watch.sources ?? []).includes("internal_transactions")) return undefined;
  return { ...nodeTracesDefinition(network), address: watch.account.toLowerCase() };
}

/** True when a watch's internal transactions are read from the node: chain.traces, and `source: node` or `both`. */
export const tracesFromNode = (watch: WatchInput, traces: boolean | undefined): boolean => internalTransactionsSource(watch, traces) !== "explorer";

/**
 * The node source of a config's internal transactions (chain.traces), or undefined when no
 * node-read watch's rule reads them. The node has no per-account query: each block is traced
 * once (debug_traceBlockByNumber) and each watch's rules see what its explorer query would
 * return: an every_block watch every record (operation 8), an account watch the calls from or
 * to its account (operation 7). So a hundred wallets cost what one costs. Each watch keeps its
 * position under its own key while the source serves it (an every_block watch under the
 * source's, as every every_block watch shares operation 8 on the explorer), and the source
 * polls on its members' most frequent schedule, in their smallest window, from the first
 * watch's start. With `both` the watch's explorer source is planned beside (plan.ts).
 */
export function planTraceSource<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>): PlannedSource | undefined {
  const byWatch = rulesByWatch(input.rules, "internal_transactions");
  const needs = input.watches.flatMap((watch) => {
    const rules = byWatch.get(watch.name);
    return rules !== undefined && tracesFromNode(watch, input.traces) ? [{ watch, rules }] : [];
  });
  const first = needs[0];
  if (first === undefined) return undefined;
  const definition = nodeTracesDefinition(input.network);
  const { schedule, maxWindowBlocks } = sharedTiming(input.defaults, needs.map((n) => n.watch), utcDayStart(input.dayMs ?? REFERENCE_DAY_MS));
  const rules: SourceRule[] = [];
  const members: SourceMember[] = [];
  for (const { watch, rules: watchRules } of needs) {
    const own = traceShareDefinition(input.network, watch) as SourceDefinition;
    const account = own.address;
    const member: SourceMember = { watch: watch.name, ownKey: sourceKey(own), filter: account === undefined ? "every record" : `from or to ${account}`, handover: { skipThrough: -1 } };
    members.push(member);
    // As operation 7 answers: the calls from or to the account (the trace's addresses are lowercase).
    const filter = account === undefined ? undefined : (record: WatchedRecord) => (record.data as InternalTransactionListItem).from === account || (record.data as InternalTransactionListItem).to === account;
    const indexed = account === undefined ? undefined : parseCondition({ any: [{ from: account }, { to: account }] }, { family: "internal_transactions" });
    if (indexed !== undefined && !indexed.ok) throw new TypeError(`the index condition of watch ${watch.name} does not parse: ${JSON.stringify(indexed.issues)}`);
    for (const rule of watchRules) rules.push(narrowRule(input.compileRule(rule, watch, "internal_transactions", own), member.handover, filter, indexed?.node));
  }
  return {
    key: sourceKey(definition),
    definition,
    description: describeSource(definition),
    watch: first.watch.name,
    family: "internal_transactions",
    rules,
    schedule,
    start: first.watch.start ?? input.defaults.start,
    maxWindowBlocks,
    members,
  };
}
