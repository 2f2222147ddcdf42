import type { RecordFamily } from "../model/record.js";
import type { WatchConfig } from "./types.js";

/** The record families a watch produces, i.e. the `source` values its rules may name. */
export function sourcesOfWatch(watch: WatchConfig): RecordFamily[] {
  switch (watch.kind) {
    case "account":
      return [...watch.sources];
    case "collection":
      return ["nft_transfers"];
    case "contract":
      return ["event_logs"];
    case "every_block":
      return ["internal_transactions"];
  }
}
