import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Simulator } from "../../src/simulator/index.js";

/*
 * The parts of a test config that only point the daemon at the simulator, or give it something
 * to watch when what it watches is not the test's subject. What a test is about (its watches,
 * rules, sinks, schedule) stays written out in the test.
 */

export interface SimulatorHeadOptions {
  /** The store file (a `.json` or `.db` path). */
  storePath: string;
  /** The status server's `listen:` (default `false`: no server). */
  listen?: string | false;
  /** The explorer's `requests_per_second` (default 1000: the simulator is local). */
  requestsPerSecond?: number;
  /** More `explorer:` keys, as YAML flow mapping entries (e.g. `page_size: 50`). */
  explorer?: string;
}

/** `explorer:`, `chain:` (the simulator's node, read with no lag), `store:` and `status:`. */
export function simulatorHead(sim: Simulator, options: SimulatorHeadOptions): string {
  const listen = options.listen === undefined || options.listen === false ? "false" : `"${options.listen}"`;
  return `explorer: { base_url: "${sim.url}", requests_per_second: ${options.requestsPerSecond ?? 1000}${options.explorer === undefined ? "" : `, ${options.explorer}`} }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${options.storePath}" }
status: { listen: ${listen} }`;
}

/**
 * `defaults:` with `fields` (after `jitter: 0s`), one watch on the simulator's busy token and a
 * rule sending its logs to the sink `out` (which the test declares): for tests about something
 * else than what is watched.
 */
export function busyTokenToOut(sim: Simulator, fields: string): string {
  return `defaults: { jitter: 0s, ${fields} }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: token-logs, watch: token, notify: [out] }`;
}

/**
 * `watches:` and `rules:` for `count` contracts that nothing ever calls (0x7…, numbered from
 * `first`): watch `w<i>` on contract i, rule `r<i>` sending it to the sink `out`. Sources in
 * numbers, for tests about how many there are.
 */
export function idleContractsToOut(count: number, first = 0): string {
  const indices = Array.from({ length: count }, (_, n) => first + n);
  const address = (i: number) => `0x7${i.toString(16).padStart(39, "0")}`;
  return `watches:
${indices.map((i) => `  - { name: w${i}, contract: "${address(i)}" }`).join("\n")}
rules:
${indices.map((i) => `  - { name: r${i}, watch: w${i}, notify: [out] }`).join("\n")}`;
}

/** Where a daemon run by a test keeps its files: the store, a file sink's alerts, the config. */
export function daemonFiles(dir: string): { storePath: string; alertsPath: string; configPath: string } {
  return { storePath: join(dir, "store.json"), alertsPath: join(dir, "alerts.jsonl"), configPath: join(dir, "config.yaml") };
}

/** Writes `text` as `config.yaml` in `dir` (the `configPath` of daemonFiles), and returns its path. */
export function writeConfig(dir: string, text: string): string {
  const { configPath } = daemonFiles(dir);
  writeFileSync(configPath, text);
  return configPath;
}

/**
 * `watches:` and `rules:` over every family the node can read, each from the simulator's
 * busiest part: the token's Transfer events (a contract), the collection's and the KIP-37
 * collection's NFT transfers, the wallet's NFT transfers and its token transfers (accounts),
 * the failed calls of every block and the wallet's internal transactions (read from the node
 * with chain.traces: true), a rule each sending to the sink `out`. For tests of where the
 * families are read from (explorer, node, both).
 */
export function nodeFamiliesToOut(sim: Simulator): string {
  const a = sim.addresses;
  return `watches:
  - { name: token, contract: "${a.busyToken}", events: ["Transfer(address indexed from, address indexed to, uint256 value)"] }
  - { name: collection, collection: "${a.busyCollection}" }
  - { name: multi, collection: "${a.kip37Collection}" }
  - { name: holder, account: "${a.busyWallet}" }
  - { name: wallet-tokens, account: "${a.busyWallet}", tokens: ["${a.busyToken}"] }
  - { name: blocks, every_block: true }
  - { name: wallet-calls, account: "${a.busyWallet}", sources: [internal_transactions] }
rules:
  - { name: token-transfers, watch: token, notify: [out] }
  - { name: collection-moves, watch: collection, notify: [out] }
  - { name: multi-moves, watch: multi, notify: [out] }
  - { name: holder-moves, watch: holder, notify: [out] }
  - { name: wallet-token-transfers, watch: wallet-tokens, source: event_logs, notify: [out] }
  - { name: failed-calls, watch: blocks, when: { failed: true }, notify: [out] }
  - { name: wallet-internal, watch: wallet-calls, source: internal_transactions, notify: [out] }`;
}
