import { createBlockTransactionsReader, type BlockTransactionsReader } from "../chain/block-transactions.js";
import type { JsonRpc } from "../chain/json-rpc.js";
import { methodSpec, type MethodSpec } from "../chain/method-abi.js";
import type { Common } from "../common/common.js";
import type { Config } from "../config/types.js";

/**
 * The node reader of a config's `transactions` source: the functions every account watch
 * with that source names (`methods:`; a selector named twice keeps the first signature), and
 * the revert-reason traces asked only for a failed transaction from, to or paid by one of
 * those accounts.
 */
export function createTransactionsReader(common: Common, config: Config, rpc: JsonRpc): BlockTransactionsReader {
  const methods = new Map<string, MethodSpec>();
  const accounts = new Set<string>();
  for (const watch of config.watches) {
    if (watch.kind !== "account" || !watch.sources.includes("transactions")) continue;
    accounts.add(watch.account.toLowerCase());
    for (const text of watch.methods) {
      const spec = methodSpec(text);
      if (!methods.has(spec.selector)) methods.set(spec.selector, spec);
    }
  }
  return createBlockTransactionsReader(common, {
    rpc,
    methods,
    wantsRevertReason: (tx) => accounts.has(tx.from) || (tx.to !== undefined && accounts.has(tx.to)) || (tx.fee_payer !== undefined && accounts.has(tx.fee_payer)),
  });
}
