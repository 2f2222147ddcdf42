import { familiesOfWatchKind, tokenTransferFamily } from "../families/registry.js";
import { BALANCE_ALERT_SOURCE, type RuleSource } from "../model/alert-document.js";
import type { LogSource, WatchConfig } from "./types.js";

/** The record families a watch produces, i.e. the `source` values its rules may name (each family's `watchedBy`). */
export function sourcesOfWatch(watch: WatchConfig): RuleSource[] {
  switch (watch.kind) {
    case "account":
    case "accounts":
      return watch.tokens.length > 0 ? [...watch.sources, tokenTransferFamily().name] : [...watch.sources];
    case "collection":
    case "contract":
    case "every_block":
      return familiesOfWatchKind(watch.kind);
    case "contracts":
      return familiesOfWatchKind("contract");
    case "balance":
      return [BALANCE_ALERT_SOURCE];
  }
}

/** What the traces reader needs of a watch (the config's watch and the planner's input alike). */
export interface TracedWatch {
  every_block?: boolean;
  account?: string;
  sources?: readonly string[];
  source?: LogSource;
}

/**
 * Where a watch's internal transactions are read: from the node's traces (chain.traces:
 * `node`, or `both` beside the explorer) for an every_block watch or an account watch of
 * them read from the node, else from the explorer.
 */
export function internalTransactionsSource(watch: TracedWatch, traces: boolean | undefined): LogSource {
  const reads = watch.every_block === true || (watch.account !== undefined && (watch.sources ?? []).includes("internal_transactions"));
  return traces === true && reads && (watch.source === "node" || watch.source === "both") ? watch.source : "explorer";
}
