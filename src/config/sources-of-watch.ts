import { familiesOfWatchKind, tokenTransferFamily } from "../families/registry.js";
import { BALANCE_ALERT_SOURCE, type RuleSource } from "../model/alert-document.js";
import type { WatchConfig } from "./types.js";

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
