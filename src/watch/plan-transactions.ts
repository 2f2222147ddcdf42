import type { PlanInput, RuleInput, WatchInput } from "./plan.js";
import type { PlannedSource } from "./poller.js";
import { sharedNodeSource, type NodeShare } from "./shared-node-source.js";
import type { SourceDefinition } from "./source.js";
import type { WatchedRecord } from "../model/record.js";
import { rulesByWatch } from "./rules-by-watch.js";

/** The node source every account watch's `transactions` share: one per network. */
export function blockTransactionsDefinition(network: string): SourceDefinition {
  return { network, operation: "blockTransactions" };
}

/** An account watch's share of it: never polled, the key its position is kept under while the shared source serves it. */
export function accountTransactionsDefinition(network: string, account: string): SourceDefinition {
  return { network, operation: "blockTransactions", address: account.toLowerCase() };
}

/**
 * The one node source of a config's top-level transactions, or undefined when no rule reads
 * them. The node has no per-account query: each block's transactions are read once (one
 * kaia_getBlockReceipts) and each account watch's rules see the transactions from, to or
 * paid by its account, the filter a per-account source would apply. So a hundred wallets
 * cost what one costs; each watch keeps its position under its own key (sharedNodeSource).
 */
export function planTransactionSource<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>): PlannedSource | undefined {
  const byWatch = rulesByWatch(input.rules, "transactions");
  const shares: Array<NodeShare<R, W>> = [];
  for (const watch of input.watches) {
    const rules = byWatch.get(watch.name);
    if (rules === undefined || watch.account === undefined || !(watch.sources ?? []).includes("transactions")) continue;
    const account = watch.account.toLowerCase();
    shares.push({ watch, rules, own: accountTransactionsDefinition(input.network, account), filter: transactionPartyFilter(account), filterText: `from, to or fee payer ${account}` });
  }
  return sharedNodeSource(input, blockTransactionsDefinition(input.network), "transactions", shares);
}

/** The transactions from, to or paid by the account. Made here, not in the loop: a closure holds the scope it was made in. */
const transactionPartyFilter = (account: string) => (record: WatchedRecord) =>
  record.family === "transactions" && (record.data.from === account || record.data.to === account || record.data.fee_payer === account);
