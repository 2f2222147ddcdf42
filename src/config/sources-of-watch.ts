import { BALANCE_ALERT_SOURCE, type RuleSource } from "../model/alert-document.js";
import type { WatchConfig } from "./types.js";

/** The record families a watch produces, i.e. the `source` values its rules may name. */
export function sourcesOfWatch(watch: WatchConfig): RuleSource[] {
  switch (watch.kind) {
    case "account":
      // A token watch's Transfer logs are event logs (of the token contracts).
      return watch.tokens.length > 0 ? [...watch.sources, "event_logs"] : [...watch.sources];
    case "collection":
      return ["nft_transfers"];
    case "contract":
      return ["event_logs"];
    case "every_block":
      return ["internal_transactions"];
    case "balance":
      return [BALANCE_ALERT_SOURCE];
  }
}
