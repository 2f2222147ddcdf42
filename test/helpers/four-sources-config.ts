import type { Simulator } from "../../src/simulator/index.js";

export interface FourSourcesOptions {
  /** The `store:` value. */
  store: string;
  /** The `defaults:` fields (start, schedule, max_window_blocks…), after `jitter: 0s`. */
  defaults: string;
  /** Fields added to `explorer:`. */
  explorer?: string;
  /** Top-level sections added (an `operational:` block, say). */
  sections?: string;
  /** Sinks added beside the unused `out`. */
  sinks?: string;
}

/**
 * The four sources the replica tests spread over replicas: a wallet's NFT transfers and
 * internal transactions, a token's event logs and a collection's transfers, each with a rule
 * into one unused webhook (the tests read the outbox, not a receiver).
 */
export function fourSourcesConfig(sim: Simulator, options: FourSourcesOptions): string {
  return `
explorer: { base_url: ${sim.url}, requests_per_second: 1000, page_size: 2000${options.explorer === undefined ? "" : `, ${options.explorer}`} }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: ${options.store}
status: { listen: false }
defaults: { jitter: 0s, ${options.defaults} }
${options.sections ?? ""}
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [nft_transfers, internal_transactions] }
  - { name: token, contract: "${sim.addresses.busyToken}" }
  - { name: collection, collection: "${sim.addresses.busyCollection}" }
rules:
  - { name: wallet-nft, watch: wallet, source: nft_transfers, notify: [out] }
  - { name: wallet-calls, watch: wallet, source: internal_transactions, notify: [out] }
  - { name: token-logs, watch: token, notify: [out] }
  - { name: collection-transfers, watch: collection, notify: [out] }
sinks:
  out: { type: webhook, url: "http://127.0.0.1:9/unused", allow_http: true }
${options.sinks ?? ""}`;
}
