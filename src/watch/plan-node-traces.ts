import type { InternalTransactionListItem } from "../explorer/types.js";
import type { WatchedRecord } from "../model/record.js";
import { internalTransactionsSource } from "../config/sources-of-watch.js";
import type { PlanInput, RuleInput, WatchInput } from "./plan.js";
import type { PlannedSource } from "./poller.js";
import { sharedNodeSource, type NodeShare } from "./shared-node-source.js";
import type { SourceDefinition } from "./source.js";
import { rulesByWatch } from "./rules-by-watch.js";

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
 * position under its own key (sharedNodeSource; an every_block watch under the source's, as
 * every every_block watch shares operation 8 on the explorer). With `both` the watch's
 * explorer source is planned beside (plan.ts).
 */
export function planTraceSource<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>): PlannedSource | undefined {
  const byWatch = rulesByWatch(input.rules, "internal_transactions");
  const shares: Array<NodeShare<R, W>> = [];
  for (const watch of input.watches) {
    const rules = byWatch.get(watch.name);
    if (rules === undefined || !tracesFromNode(watch, input.traces)) continue;
    const own = traceShareDefinition(input.network, watch) as SourceDefinition;
    const account = own.address;
    if (account === undefined) shares.push({ watch, rules, own, filterText: "every record" });
    else shares.push({ watch, rules, own, filter: callPartyFilter(account), filterText: `from or to ${account}`, indexedBy: { place: "party", value: account } });
  }
  return sharedNodeSource(input, nodeTracesDefinition(input.network), "internal_transactions", shares);
}

/** As operation 7 answers: the calls from or to the account (the trace's addresses are lowercase). Made here, not in the loop: a closure holds the scope it was made in. */
const callPartyFilter = (account: string) => (record: WatchedRecord) =>
  (record.data as InternalTransactionListItem).from === account || (record.data as InternalTransactionListItem).to === account;
