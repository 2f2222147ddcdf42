import type { RecordFamily } from "../model/record.js";
import type { WatchConfig } from "./types.js";

/** The record families a watch produces, i.e. the `source` values its rules may name. */
export function sourcesOfWatch(watch: WatchConfig): RecordFamily[] {
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
  }
}
